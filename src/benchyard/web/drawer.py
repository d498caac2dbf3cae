"""One attempt in full, for the scenario drawer: its scenario, every try (superseded ones with the
fault that ended them), the trajectory as a timeline, each check with the judge's verdict per
criterion, stdout and stderr, and the patch as diff lines. Everything agent-written stays text:
the templates escape it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from benchyard.runner.trajectory import Event, is_judge
from benchyard.spec.loader import Benchmark
from benchyard.spec.models import Scenario
from benchyard.spec.tools import ToolReference
from benchyard.store.browse import attempt_tries
from benchyard.store.records import AttemptRecord, CheckRecord, RunRecord
from benchyard.store.store import Store
from benchyard.web.catalog import BenchmarkCatalog
from benchyard.web.models import (
    AttemptDetail,
    CheckDetail,
    Criterion,
    DiffLine,
    EventView,
    FixtureView,
    ScenarioView,
    TryRow,
)
from benchyard.web.rows import attempt_row

MAX_EVENTS = 2_000
EVENT_CHARS = 20_000
PATCH_LINES = 5_000
OUTPUT_CHARS = 8_192
"""Characters of the answer, stdout and stderr the drawer shows; the rest is at the artifact's
endpoint (/attempts/ID/NAME), loaded on demand."""
KNOWN_DATA = frozenset({"source", "model", "tool", "call_id", "check"})


def attempt_detail(
    store: Store, catalog: BenchmarkCatalog, attempt_id: str, *, median_turns: float = 0
) -> AttemptDetail:
    tries = attempt_tries(store, attempt_id)
    shown = next(attempt for attempt in tries if attempt.id == attempt_id)
    run = store.get_run(shown.run_id)
    scenario, note = _scenario(catalog, run, shown.scenario_id)
    events = shown.trajectory or []
    return AttemptDetail(
        attempt=attempt_row(shown, median_turns=median_turns),
        run_id=run.id,
        answer=_head(shown.answer),
        answer_cut=_cut(shown.answer),
        answers=shown.answers,
        scenario=scenario,
        scenario_note=note,
        tries=[_try(attempt, attempt.id == attempt_id) for attempt in tries],
        timeline=timeline(events[:MAX_EVENTS]),
        timeline_cut=max(0, len(events) - MAX_EVENTS),
        checks=[_check(check, events) for check in shown.checks],
        stdout=_head(shown.stdout),
        stderr=_head(shown.stderr),
        stdout_cut=_cut(shown.stdout),
        stderr_cut=_cut(shown.stderr),
        stdout_dropped_bytes=shown.stdout_dropped_bytes,
        stderr_dropped_bytes=shown.stderr_dropped_bytes,
        patch=diff_lines(shown.patch)[:PATCH_LINES] if shown.patch else None,
        patch_cut=max(0, len(shown.patch.splitlines()) - PATCH_LINES) if shown.patch else 0,
    )


def _head(text: str | None) -> str | None:
    return None if text is None else text[:OUTPUT_CHARS]


def _cut(text: str | None) -> int:
    return max(0, len(text or "") - OUTPUT_CHARS)


def _try(attempt: AttemptRecord, shown: bool) -> TryRow:
    return TryRow(
        id=attempt.id,
        try_number=attempt.try_number,
        superseded=attempt.superseded,
        verdict=attempt.verdict,
        failure_kind=attempt.failure_kind,
        cause=attempt.cause,
        started_at=attempt.started_at,
        duration_sec=attempt.duration_sec,
        shown=shown,
    )


# ---- the scenario ------------------------------------------------------------------------------


def _scenario(
    catalog: BenchmarkCatalog, run: RunRecord, scenario_id: str
) -> tuple[ScenarioView | None, str | None]:
    loaded = catalog.load(Path(run.benchmark_path))
    if loaded.benchmark is None:
        return None, f"the benchmark is not readable at {run.benchmark_path}: {loaded.problem}"
    benchmark = loaded.benchmark
    scenario = next((s for s in benchmark.scenarios if s.id == scenario_id), None)
    if scenario is None:
        return None, f"the benchmark at {run.benchmark_path} has no scenario '{scenario_id}' now"
    note = None
    if benchmark.content_hash != run.benchmark_hash:
        note = (
            f"the benchmark changed since this run (now {benchmark.version}, "
            f"{benchmark.content_hash[:19]}; the run had {run.benchmark_version}, "
            f"{run.benchmark_hash[:19]}): this is the scenario as it is now"
        )
    return scenario_view(benchmark, scenario), note


def scenario_view(benchmark: Benchmark, scenario: Scenario) -> ScenarioView:
    location = benchmark.locations[scenario.id]
    base = location.file.parent
    fixtures = [
        _fixture(benchmark, base, fixture.dest, fixture.src, fixture.content, hidden)
        for hidden, files in (
            (False, scenario.fixtures.files),
            (True, scenario.fixtures.verification),
        )
        for fixture in files
    ]
    return ScenarioView(
        id=scenario.id,
        category=scenario.category,
        difficulty=scenario.difficulty,
        tags=list(scenario.tags),
        description=scenario.description,
        stimulus_kind=scenario.stimulus.kind,
        system=scenario.stimulus.system,
        turns=list(scenario.stimulus.turns),
        fixtures=fixtures,
        tools=[tool.name for tool in scenario.tools],
        checks=[
            f"{check.label}" + (f" ({check.type})" if check.name else "")
            for check in scenario.checks
        ],
        reference=_reference(scenario),
        file=location.file.relative_to(benchmark.root).as_posix(),
        line=location.line,
    )


def _fixture(
    benchmark: Benchmark,
    base: Path,
    dest: str,
    src: str | None,
    content: str | None,
    hidden: bool,
) -> FixtureView:
    href = None
    if src is not None:
        relative = (base / src).resolve()
        if relative.is_relative_to(benchmark.root) and relative.is_file():
            path = relative.relative_to(benchmark.root).as_posix()
            href = f"/benchmarks/{quote(benchmark.name)}/files/{quote(path)}"
    return FixtureView(dest=dest, src=src, content=content, hidden=hidden, href=href)


def _reference(scenario: Scenario) -> str | None:
    reference = scenario.reference
    if reference is None:
        return None
    if isinstance(reference, str):
        return reference
    if isinstance(reference, ToolReference):
        return json.dumps(reference.model_dump(mode="json"), indent=2, ensure_ascii=False)
    return json.dumps(reference, indent=2, ensure_ascii=False)


# ---- the trajectory -----------------------------------------------------------------------------


def timeline(events: list[Event]) -> list[EventView]:
    first = min((event.ts for event in events if event.ts), default=None)
    return [_event(index, event, first) for index, event in enumerate(events)]


def _event(index: int, event: Event, first: float | None) -> EventView:
    data = event.data or {}
    extra = {key: value for key, value in data.items() if key not in KNOWN_DATA}
    content = event.content or ""
    return EventView(
        index=index,
        kind=event.kind,
        role=event.role,
        content=content[:EVENT_CHARS],
        content_cut=max(0, len(content) - EVENT_CHARS),
        reasoning=event.reasoning,
        at=datetime.fromtimestamp(event.ts, UTC) if event.ts else None,
        offset_sec=(event.ts - first) if event.ts and first is not None else None,
        tokens_in=event.tokens_in,
        tokens_out=event.tokens_out,
        cost_usd=event.cost_usd,
        ttft_sec=event.ttft_sec,
        latency_sec=event.latency_sec,
        tool=str(data["tool"]) if "tool" in data else None,
        judge=is_judge(event),
        model=str(data["model"]) if "model" in data else None,
        data=json.dumps(extra, ensure_ascii=False, sort_keys=True)[:EVENT_CHARS] if extra else None,
    )


# ---- checks and the judge ------------------------------------------------------------------------


def _check(check: CheckRecord, events: list[Event]) -> CheckDetail:
    criteria, explanation = judge_reply(check.label, events)
    return CheckDetail(
        position=check.position,
        label=check.label,
        check_type=check.check_type,
        passed=check.passed,
        score=check.score,
        weight=check.weight,
        threshold=check.threshold,
        reason=check.reason,
        criteria=criteria,
        explanation=explanation,
    )


def judge_reply(label: str, events: list[Event]) -> tuple[list[Criterion], str | None]:
    """The judge's last readable reply for the check `label`: its verdict and reason for each
    criterion, and its explanation (nothing when no judge graded the check)."""
    for event in reversed(events):
        if not is_judge(event) or event.kind != "message":
            continue
        if (event.data or {}).get("check") != label:
            continue
        reply = _json_object(event.content)
        if reply is None:
            continue
        items = reply.get("criteria")
        criteria = [
            Criterion(
                number=_int(item.get("criterion"), number),
                met=item.get("met") if isinstance(item.get("met"), bool) else None,
                reason=str(item.get("reason") or ""),
            )
            for number, item in enumerate(items if isinstance(items, list) else [], start=1)
            if isinstance(item, dict)
        ]
        explanation = reply.get("explanation")
        return criteria, str(explanation) if explanation is not None else None
    return [], None


def _json_object(text: str) -> dict[str, Any] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


# ---- the patch -------------------------------------------------------------------------------------


def diff_lines(patch: str) -> list[DiffLine]:
    lines = []
    for text in patch.splitlines():
        if text.startswith(("diff --git", "--- ", "+++ ", "index ", "new file", "deleted file")):
            kind = "file"
        elif text.startswith("@@"):
            kind = "hunk"
        elif text.startswith("+"):
            kind = "add"
        elif text.startswith("-"):
            kind = "del"
        else:
            kind = "context"
        lines.append(DiffLine(kind=kind, text=text))
    return lines
