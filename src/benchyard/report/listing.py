"""What `benchyard runs`, `show` and `benchmarks` print with `--format json`: pydantic models in the
report's conventions (see docs/json-output.md), built from the store's records, each with a
`schema_version` and a schema file shipped in the package (report/output_schemas.py)."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import Any, TextIO

from pydantic import Field

from benchyard.report.lineage import lineage
from benchyard.report.model import AgentIdentity, BenchmarkIdentity, ReportModel, RunInfo
from benchyard.report.outputs import Output
from benchyard.runner.failures import CLAIMED_KINDS
from benchyard.store.records import AttemptRecord, RunRecord


class BenchmarkEntry(Output):
    """One line of `benchyard benchmarks` (its JSON: an array of them)."""

    label: str = Field(description="The built-in name, or the path under the current directory.")
    origin: str = Field(description="built-in or local.")
    path: str
    valid: bool
    name: str | None = None
    version: str | None = None
    hash: str | None = None
    scenarios: int | None = None
    categories: list[str] = Field(default_factory=list)
    description: str | None = None
    problems: int | None = Field(default=None, description="How many, when it is not valid.")


class RunEntry(Output):
    """One row of `benchyard runs` (its JSON: an array of them, newest first)."""

    id: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    benchmark: BenchmarkIdentity
    agent: AgentIdentity
    planned_attempts: int
    finished_attempts: int = Field(description="Final attempts written so far.")
    passed: int
    errors: int
    parent_run_id: str | None = Field(description="The run this one re-ran, if a rerun.")
    rescored_from: str | None = Field(
        default=None, description="The run whose recorded outputs this one re-graded."
    )
    imported_from: dict[str, Any] | None = Field(
        default=None, description="The log this run was imported from (format, file, ...)."
    )
    lineage: list[str] = Field(
        default_factory=list,
        description="What the run was made from: 'rerun of ID', 'rescore of ID', "
        "'imported from FORMAT FILE'.",
    )
    nodes: dict[str, int] = Field(
        default_factory=dict,
        description="Final attempts per node they ran on (a machine, and its Ray node).",
    )
    stuck: int = Field(
        default=0,
        description="Attempts held by a live worker whose watchdog found them stuck "
        "(`benchyard worker --drain` takes them back).",
    )


class CheckView(ReportModel):
    label: str
    type: str
    passed: bool
    score: float
    weight: float
    reason: str
    threshold: float | None


class AttemptView(ReportModel):
    """One try of an attempt as `benchyard show` prints it; the evidence only for one scenario."""

    id: str
    scenario_id: str
    category: str
    epoch: int
    try_number: int
    superseded: bool = Field(description="A try replaced by a retry of an infrastructure fault.")
    verdict: str
    failure_kind: str | None
    claimed: bool = Field(description="The failure is one only the agent's exit status claims.")
    score: float
    cause: str | None
    turns: int
    user_turns: int
    hit_max_turns: bool
    duration_sec: float
    node: str | None = Field(default=None, description="The machine (and Ray node) the try ran on.")
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    judge_cost_usd: float | None
    checks: list[CheckView]
    answer: str | None = None
    trajectory: list[dict[str, Any]] | None = None
    stdout: str | None = None
    stderr: str | None = None
    stdout_dropped_bytes: int = 0
    stderr_dropped_bytes: int = 0
    patch: str | None = None


class RunShown(Output):
    """`benchyard show RUN [SCENARIO] --format json`."""

    run: RunInfo
    planned_attempts: int
    scenario_id: str | None = Field(description="The scenario asked for, if any.")
    attempts: list[AttemptView] = Field(description="Every try, retried ones included.")
    stuck: int = Field(default=0, description="Attempts the holding worker's watchdog found stuck.")


def benchmark_entries(start: Path) -> list[BenchmarkEntry]:
    """The built-in library, then the benchmarks under `start` (labelled by their path under
    it), each loaded: valid with its identity and size, or invalid with how many problems."""
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.spec.library import builtin_benchmarks, local_benchmarks
    from benchyard.spec.problems import BenchmarkInvalid

    entries = [(name, path, "built-in") for name, path in builtin_benchmarks().items()]
    entries += [
        (str(path.relative_to(start.resolve())) or ".", path, "local")
        for path in local_benchmarks(start)
    ]
    listed = []
    for label, path, origin in entries:
        try:
            benchmark = load_benchmark(path)
        except BenchmarkInvalid as invalid:
            listed.append(
                BenchmarkEntry(
                    label=label,
                    origin=origin,
                    path=str(path),
                    valid=False,
                    problems=len(invalid.problems),
                )
            )
            continue
        listed.append(
            BenchmarkEntry(
                label=label,
                origin=origin,
                path=str(path),
                valid=True,
                name=benchmark.name,
                version=benchmark.version,
                hash=benchmark.content_hash,
                scenarios=len(benchmark.scenarios),
                categories=sorted({s.category for s in benchmark.scenarios}),
                description=benchmark.manifest.description,
            )
        )
    return listed


def run_entry(
    run: RunRecord, verdicts: dict[str, int], nodes: dict[str, int] | None = None, stuck: int = 0
) -> RunEntry:
    return RunEntry(
        id=run.id,
        started_at=run.started_at,
        finished_at=run.finished_at,
        status=run.status,
        benchmark=BenchmarkIdentity(
            name=run.benchmark_name, version=run.benchmark_version, hash=run.benchmark_hash
        ),
        agent=AgentIdentity(
            name=run.agent_name,
            config=run.agent_config,
            commit=run.agent_commit,
            dirty=run.agent_dirty,
            diff_hash=run.agent_diff_hash,
        ),
        planned_attempts=run.planned_attempts,
        finished_attempts=sum(verdicts.values()),
        passed=verdicts.get("passed", 0),
        errors=verdicts.get("error", 0),
        parent_run_id=run.parent_run_id,
        rescored_from=run.rescored_from,
        imported_from=imported
        if isinstance(imported := run.settings.get("imported_from"), dict)
        else None,
        lineage=lineage(run),
        nodes=nodes or {},
        stuck=stuck,
    )


def attempt_view(attempt: AttemptRecord, with_evidence: bool) -> AttemptView:
    view = AttemptView(
        id=attempt.id,
        scenario_id=attempt.scenario_id,
        category=attempt.category,
        epoch=attempt.epoch,
        try_number=attempt.try_number,
        superseded=attempt.superseded,
        verdict=attempt.verdict,
        failure_kind=attempt.failure_kind,
        claimed=attempt.failure_kind in CLAIMED_KINDS,
        score=attempt.score,
        cause=attempt.cause,
        turns=attempt.turns,
        user_turns=attempt.user_turns,
        hit_max_turns=attempt.hit_max_turns,
        duration_sec=attempt.duration_sec,
        node=attempt.node,
        tokens_in=attempt.tokens_in,
        tokens_out=attempt.tokens_out,
        cost_usd=attempt.cost_usd,
        judge_cost_usd=attempt.judge_cost_usd,
        checks=[
            CheckView(
                label=check.label,
                type=check.check_type,
                passed=check.passed,
                score=check.score,
                weight=check.weight,
                reason=check.reason,
                threshold=check.threshold,
            )
            for check in attempt.checks
        ],
    )
    if with_evidence:
        view.answer = attempt.answer
        view.trajectory = [event.to_dict() for event in attempt.trajectory or []]
        view.stdout, view.stderr = attempt.stdout, attempt.stderr
        view.stdout_dropped_bytes = attempt.stdout_dropped_bytes
        view.stderr_dropped_bytes = attempt.stderr_dropped_bytes
        view.patch = attempt.patch
    return view


def dump_json(models: ReportModel | Sequence[ReportModel]) -> str:
    """Indented JSON of one model or a list of them, ending in a newline."""
    if isinstance(models, ReportModel):
        payload: Any = models.model_dump(mode="json")
    else:
        payload = [model.model_dump(mode="json") for model in models]
    return strict_json(payload, ensure_ascii=False)


def strict_json(payload: Any, *, ensure_ascii: bool = True) -> str:
    """Indented JSON that every parser reads, ending in a newline: a number that is not finite
    (an infinite cost recorded before claims were checked) is written as null, never as the
    `Infinity` or `NaN` that strict JSON parsers refuse."""
    text = io.StringIO()
    write_strict_json(payload, text, ensure_ascii=ensure_ascii)
    return text.getvalue()


def write_strict_json(payload: Any, out: TextIO, *, ensure_ascii: bool = True) -> None:
    """`strict_json`, written to `out` a piece at a time: a report of 100,000 attempts never
    holds its whole JSON text (100 MiB less at its peak)."""
    json.dump(_finite(payload), out, indent=2, ensure_ascii=ensure_ascii, allow_nan=False)
    out.write("\n")


def iter_strict_json(payload: Any, *, ensure_ascii: bool = True) -> Iterator[str]:
    """`write_strict_json`'s text in pieces, as it is made (the web UI streams a report's)."""
    encoder = json.JSONEncoder(indent=2, ensure_ascii=ensure_ascii, allow_nan=False)
    yield from encoder.iterencode(_finite(payload))
    yield "\n"


class StreamedList:
    """A JSON list of flat objects (strings, numbers, booleans and nulls in them, no list or
    object; none empty), each written by write_streamed_json as `items` yields it."""

    def __init__(self, items: Iterable[dict[str, Any]]) -> None:
        self.items = items


def write_streamed_json(payload: Any, out: TextIO, *, ensure_ascii: bool = True) -> None:
    """`write_strict_json` of a payload that may hold StreamedLists (in its dicts and lists): the
    same text, each of their objects written as it is read, never held (a 100,000-attempt
    report's failures and flags). Their objects are written as given: a number that is not
    finite in one raises."""
    for piece in _pieces(_finite(payload), 0, ensure_ascii):
        out.write(piece)
    out.write("\n")


def _pieces(value: Any, level: int, ensure_ascii: bool) -> Iterator[str]:
    """`value`'s text indented as json.dump(indent=2) writes it at nesting `level`."""
    if isinstance(value, StreamedList):
        yield from _streamed_pieces(value.items, level, ensure_ascii)
    elif isinstance(value, dict | list) and _holds_streamed(value):
        yield from _container_pieces(value, level, ensure_ascii)
    else:
        text = json.dumps(value, indent=2, ensure_ascii=ensure_ascii, allow_nan=False)
        yield text.replace("\n", "\n" + "  " * level)  # JSON strings hold no raw newline


def _holds_streamed(value: dict[str, Any] | list[Any]) -> bool:
    items = value.values() if isinstance(value, dict) else value
    return any(
        isinstance(item, StreamedList) or (isinstance(item, dict | list) and _holds_streamed(item))
        for item in items
    )


def _container_pieces(
    value: dict[str, Any] | list[Any], level: int, ensure_ascii: bool
) -> Iterator[str]:
    """A non-empty dict (with string keys) or list, piece by piece."""
    inner = "\n" + "  " * (level + 1)
    pairs = value.items() if isinstance(value, dict) else ((None, item) for item in value)
    opening, closing = "{}" if isinstance(value, dict) else "[]"
    for index, (key, item) in enumerate(pairs):
        named = "" if key is None else json.dumps(key, ensure_ascii=ensure_ascii) + ": "
        yield ("," if index else opening) + inner + named
        yield from _pieces(item, level + 1, ensure_ascii)
    yield "\n" + "  " * level + closing


STREAMED_BATCH = 1000  # a StreamedList's objects encoded in one call


def _streamed_pieces(
    items: Iterable[dict[str, Any]], level: int, ensure_ascii: bool
) -> Iterator[str]:
    """A StreamedList's objects, STREAMED_BATCH at a time: json's C encoder writes a batch with
    the fields' indented separator, and the objects' own indentation is put in where a `}` meets
    a `{` across that separator (which holds a newline: it is never inside a JSON string, and in
    flat objects only the end and start of two objects meet there). Ten times faster than the
    indenting encoder, which is Python."""
    item_indent = "\n" + "  " * (level + 1)
    field_indent = item_indent + "  "
    encoder = json.JSONEncoder(
        ensure_ascii=ensure_ascii, allow_nan=False, separators=("," + field_indent, ": ")
    )
    between = ("}," + field_indent + "{", item_indent + "}," + item_indent + "{" + field_indent)
    iterator = iter(items)
    opening = "["
    while batch := list(islice(iterator, STREAMED_BATCH)):
        text = encoder.encode(batch)[2:-2].replace(*between)
        yield opening + item_indent + "{" + field_indent + text + item_indent + "}"
        opening = ","
    yield "[]" if opening == "[" else "\n" + "  " * level + "]"


def _finite(value: Any) -> Any:
    """`value` with every number that is not finite as None: `value` itself when it holds none
    (a report's dump is never copied whole to find that out)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        changed = {key: new for key, item in value.items() if (new := _finite(item)) is not item}
        return {**value, **changed} if changed else value
    if isinstance(value, list | tuple):
        items = [_finite(item) for item in value]
        return (
            items if any(new is not old for new, old in zip(items, value, strict=True)) else value
        )
    return value
