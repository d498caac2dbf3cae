"""Inspect AI evaluation logs: a benchyard run written as one (the JSON log format, version 2,
which `inspect view` lists and `inspect_ai.log.read_eval_log` reads), and an Inspect log's samples
and scores read back as a benchyard run.

Export: the benchmark is the task (its version the task version), the agent the model
(`benchyard/<agent>`), each final attempt a sample (scenario id and epoch) with the conversation
from its trajectory, its transcript events (interop/inspect_events.py: model calls, tool calls,
scores; what `inspect view` shows in the Transcript tab), the answer as the output, and one
score, `benchyard`: `C` (passed) or `I` (failed or timed out; a timeout also carries a time
limit), with the cause and the checks in its metadata. An attempt that ended in an error has no
score and carries the error, as Inspect marks samples that errored.

Import: each sample becomes an attempt of the same id and epoch, graded by one scorer (the first,
or `scorer`): `C` or true or a number at or above `pass_threshold` passes; `I`, `N`, false or a
lower number fails (`P` is 0.5); a sample that hit a time limit without passing is a timeout; one
with an error, or without that score, is an error (left out of accuracy, as benchyard's own
errors). Given the benchmark the log's tasks came from (`benchmark`), the run takes its name,
version and content hash, so `benchyard compare` pairs it with benchyard's runs of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import struct
import uuid
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from benchyard.errors import BenchyardError
from benchyard.interop.inspect_events import Outcome, offered_tools, transcript
from benchyard.interop.source import RunSource, check_rows, iso
from benchyard.runner.trajectory import Event
from benchyard.spec.loader import Benchmark
from benchyard.spec.source_files import JsonRefused, json_error_line, json_problem, load_json
from benchyard.store.records import AttemptRecord, RunRecord
from benchyard.store.store import Store

SCORER = "benchyard"
MAX_LOG_BYTES = 256 * 1024 * 1024
ZIP_ZSTANDARD = 93  # the zip method number of Zstandard, which Python's zipfile cannot read
LOCAL_HEADER_BYTES = 30  # a zip member's local header before its name and extra field
"""The most a log may be, and decompress to (a .eval's members together)."""
INSPECT_STATUS = {
    "finished": "success",
    "cancelled": "cancelled",
    "failed": "error",
    "interrupted": "error",
}


class ImportRefused(BenchyardError):
    """A file that is not an Inspect log benchyard can read."""


# ---- export ------------------------------------------------------------------------------------


def to_eval_log(source: RunSource) -> dict[str, Any]:
    run = source.run
    model = f"benchyard/{run.agent_name}"
    offered = offered_tools(source)
    samples = [
        _sample(source, attempt, model, offered.get(attempt.scenario_id, []))
        for attempt in source.attempts
    ]
    scored = [s for s in samples if "scores" in s]
    correct = sum(1 for s in scored if s["scores"][SCORER]["value"] == "C")
    accuracy = correct / len(scored) if scored else 0.0
    stderr = (accuracy * (1 - accuracy) / (len(scored) - 1)) ** 0.5 if len(scored) > 1 else 0.0
    ids = sorted({attempt.scenario_id for attempt in source.attempts})
    status = INSPECT_STATUS.get(run.status, "started")
    tokens_in = sum(a.tokens_in for a in source.attempts)
    tokens_out = sum(a.tokens_out for a in source.attempts)
    log: dict[str, Any] = {
        "version": 2,
        "status": status,
        "eval": {
            "eval_id": run.id,
            "run_id": run.id,
            "created": iso(run.started_at),
            "task": run.benchmark_name,
            "task_id": run.benchmark_hash.removeprefix("sha256:")[:22],
            "task_version": run.benchmark_version,
            "task_attribs": {},
            "task_args": {},
            "dataset": {
                "name": run.benchmark_name,
                "location": run.benchmark_path,
                "samples": len(ids),
                "sample_ids": ids,
                "shuffled": False,
            },
            "model": model,
            "model_args": {},
            "config": {"epochs": int(run.settings.get("epochs") or 1)},
            "packages": {"benchyard": run.benchyard_version},
            "metadata": {
                "benchyard": {
                    "run_id": run.id,
                    "benchmark_hash": run.benchmark_hash,
                    "agent": run.agent_name,
                    "agent_config": run.agent_config,
                    "settings": run.settings,
                    "status": run.status,
                }
            },
        },
        "plan": {
            "name": "plan",
            "steps": [{"solver": f"benchyard/{run.agent_name}", "params": {}}],
        },
        "results": {
            "total_samples": len(samples),
            "completed_samples": len(scored),
            "scores": [
                {
                    "name": SCORER,
                    "scorer": SCORER,
                    "scored_samples": len(scored),
                    "unscored_samples": len(samples) - len(scored),
                    "params": {},
                    "metrics": {
                        "accuracy": {"name": "accuracy", "value": accuracy, "params": {}},
                        "stderr": {"name": "stderr", "value": stderr, "params": {}},
                    },
                }
            ],
        },
        "stats": {
            "started_at": iso(run.started_at) or "",
            "completed_at": iso(run.finished_at) or "",
            "model_usage": {
                model: {
                    "input_tokens": tokens_in,
                    "output_tokens": tokens_out,
                    "total_tokens": tokens_in + tokens_out,
                }
            },
        },
        "samples": samples,
    }
    if run.agent_commit:
        log["eval"]["revision"] = {
            "type": "git",
            "origin": run.agent_repo or "",
            "commit": run.agent_commit,
            "dirty": run.agent_dirty,
        }
    if status == "error":
        log["error"] = {
            "message": run.status_reason or f"the run ended {run.status}",
            "traceback": "",
            "traceback_ansi": "",
        }
    return log


def _sample(
    source: RunSource, attempt: AttemptRecord, model: str, offered: list[dict[str, Any]]
) -> dict[str, Any]:
    answer = attempt.answer or ""
    outcome = _outcome(attempt, answer, source.target(attempt))
    told = transcript(source, attempt, model, outcome, offered)
    sample: dict[str, Any] = {
        "id": attempt.scenario_id,
        "epoch": attempt.epoch,
        "input": source.input_text(attempt),
        "target": outcome.target,
        "messages": told.messages,
        "output": {
            "model": model,
            "choices": [
                {
                    "message": {"role": "assistant", "content": answer, "source": "generate"},
                    "stop_reason": "stop",
                }
            ],
            "completion": answer,
            "usage": {
                "input_tokens": attempt.tokens_in,
                "output_tokens": attempt.tokens_out,
                "total_tokens": attempt.tokens_in + attempt.tokens_out,
            },
        },
        "metadata": {
            "category": attempt.category,
            "verdict": attempt.verdict,
            "failure_kind": attempt.failure_kind,
            "attempt_id": attempt.id,
            "try_number": attempt.try_number,
            "turns": attempt.turns,
        },
        "events": told.events,
        "events_data": {"messages": told.messages, "calls": []},
        "model_usage": {
            model: {
                "input_tokens": attempt.tokens_in,
                "output_tokens": attempt.tokens_out,
                "total_tokens": attempt.tokens_in + attempt.tokens_out,
                **({"total_cost": attempt.cost_usd} if attempt.cost_usd is not None else {}),
            }
        },
        "started_at": iso(attempt.started_at),
        "completed_at": iso(attempt.finished_at),
        "total_time": attempt.duration_sec,
        "working_time": attempt.duration_sec,
        "uuid": attempt.id,
    }
    if outcome.error is not None:
        sample["error"] = outcome.error
    if outcome.scores is not None:
        sample["scores"] = outcome.scores
    if attempt.verdict == "timeout":
        sample["limit"] = {"type": "time", "limit": attempt.duration_sec}
    return sample


def _outcome(attempt: AttemptRecord, answer: str, target: str) -> Outcome:
    """An attempt that ended in an error has no score and carries the error (as Inspect marks
    samples that errored); any other has the `benchyard` score."""
    if attempt.verdict == "error":
        error = {"message": attempt.cause or "error", "traceback": "", "traceback_ansi": ""}
        return Outcome(None, error, target)
    score = {
        "value": "C" if attempt.verdict == "passed" else "I",
        "answer": answer,
        "explanation": attempt.cause or attempt.verdict,
        "metadata": {
            "verdict": attempt.verdict,
            "score": attempt.score,
            "checks": check_rows(attempt),
        },
    }
    return Outcome({SCORER: score}, None, target)


def write_eval_log(source: RunSource, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_eval_log(source), ensure_ascii=False), encoding="utf-8")
    return path


def default_name(run: RunRecord) -> str:
    """Inspect's own naming: `<created>_<task>_<id>.json`, so `inspect view` sorts it."""
    stamp = run.started_at.astimezone(UTC).strftime("%Y-%m-%dT%H-%M-%S+00-00")
    return f"{stamp}_{run.benchmark_name}_{run.id}.json"


# ---- import ------------------------------------------------------------------------------------


def read_log(path: Path) -> dict[str, Any]:
    """An Inspect log as data: the JSON format, or the `.eval` format (a zip of header.json and
    samples/*.json). A log is untrusted: it is read up to MAX_LOG_BYTES (decompressed, all
    members together), and its JSON through load_json (nesting, number size); anything it cannot
    be is an ImportRefused naming the file (the member) and the line."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise ImportRefused(f"cannot read {path}: {error.strerror}") from None
    if size > MAX_LOG_BYTES:
        raise ImportRefused(f"{path} is over {MAX_LOG_BYTES // (1024 * 1024)} MiB")
    if zipfile.is_zipfile(path):
        import zstandard

        unreadable = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError)
        try:
            return _read_eval_zip(path)
        except (*unreadable, zstandard.ZstdError) as error:
            raise ImportRefused(f"{path}: not a readable .eval (zip) log: {error}") from None
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ImportRefused(f"cannot read {path}: {error.strerror}") from None
    data = _json(raw, str(path))
    if not isinstance(data, dict) or not isinstance(data.get("eval"), dict):
        raise ImportRefused(f"{path} is not an Inspect log: it has no `eval`")
    return data


def _json(raw: bytes, where: str) -> Any:
    """A log's JSON document, or ImportRefused as `where:line: what is wrong`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        at = raw[: error.start].count(b"\n") + 1
        raise ImportRefused(f"{where}:{at}: not UTF-8 text") from None
    try:
        return load_json(text)
    except JsonRefused as error:
        line = json_error_line(error, text)
        shown = f"{where}:{line}" if line is not None else where
        raise ImportRefused(
            f"{shown}: not an Inspect log (invalid JSON: {json_problem(error, text)})"
        ) from None


def _read_eval_zip(path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        if "header.json" not in names and "_journal/start.json" not in names:
            raise ImportRefused(f"{path} is a zip but not an Inspect .eval log")
        header_name = "header.json" if "header.json" in names else "_journal/start.json"
        budget = [MAX_LOG_BYTES]
        log = _member(archive, header_name, path, budget)
        if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
            raise ImportRefused(f"{path}: {header_name} is not an Inspect log header")
        log["samples"] = [
            _member(archive, name, path, budget)
            for name in sorted(names)
            if name.startswith("samples/") and name.endswith(".json")
        ]
    return dict(log)


def _member(archive: zipfile.ZipFile, name: str, path: Path, budget: list[int]) -> Any:
    """One member's JSON, decompressed a chunk at a time up to what is left of `budget` (every
    member together), never trusting the size the archive declares."""
    chunks: list[bytes] = []
    info = archive.getinfo(name)
    with _open_member(archive, info, path) as member:
        while chunk := member.read(min(1 << 20, budget[0] + 1)):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise ImportRefused(
                    f"{path}: {name}: the log decompresses to over "
                    f"{MAX_LOG_BYTES // (1024 * 1024)} MiB"
                )
            chunks.append(chunk)
    raw = b"".join(chunks)
    if info.compress_type == ZIP_ZSTANDARD and zlib.crc32(raw) != info.CRC:
        raise ImportRefused(f"{path}: {name}: its content does not match its CRC")
    return _json(raw, f"{path}: {name}")


def _open_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> IO[bytes]:
    """A member's decompressed content as a stream: zipfile's own for the methods it knows, and
    Zstandard (method 93, which Inspect writes since 0.3.285) through the zstandard package."""
    if info.compress_type != ZIP_ZSTANDARD:
        return archive.open(info)
    import zstandard

    return zstandard.ZstdDecompressor().stream_reader(_stored_bytes(info, path))


def _stored_bytes(info: zipfile.ZipInfo, path: Path) -> bytes:
    """A member's compressed bytes, read from behind its local header (at most the file's size)."""
    with path.open("rb") as file:
        file.seek(info.header_offset)
        header = file.read(LOCAL_HEADER_BYTES)
        if len(header) != LOCAL_HEADER_BYTES or header[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"{info.filename}: bad local header")
        name_length, extra_length = struct.unpack("<HH", header[26:30])
        file.seek(info.header_offset + LOCAL_HEADER_BYTES + name_length + extra_length)
        stored = file.read(info.compress_size)
    if len(stored) != info.compress_size:
        raise zipfile.BadZipFile(f"{info.filename}: truncated")
    return stored


@dataclass(frozen=True)
class Imported:
    run: RunRecord
    attempts: int
    unknown: list[str]  # sample ids that are not scenarios of the benchmark given


def import_log(
    store: Store,
    path: Path,
    *,
    benchmark: Benchmark | None = None,
    agent_name: str | None = None,
    scorer: str | None = None,
    pass_threshold: float = 1.0,
) -> Imported:
    log = read_log(path)
    listed = log.get("samples")
    samples = [s for s in listed if isinstance(s, dict)] if isinstance(listed, list) else []
    if not samples:
        raise ImportRefused(f"{path} holds no samples (was it written with log_samples off?)")
    chosen = scorer or _first_scorer(samples)
    with _refused_as(f"{path}: eval"):
        run = _run_record(log, path, benchmark, agent_name, len(samples))
    scenarios = {s.id: s for s in benchmark.scenarios} if benchmark is not None else {}
    records = []
    for index, sample in enumerate(samples):
        with _refused_as(f"{path}: samples[{index}]"):
            records.append(_attempt(run, sample, chosen, pass_threshold, scenarios))
    unknown = sorted(
        {a.scenario_id for a in records if scenarios and a.scenario_id not in scenarios}
    )
    store.create_run(run)
    store.record_attempts(records)
    return Imported(run, len(records), unknown)


@contextlib.contextmanager
def _refused_as(where: str) -> Iterator[None]:
    """A field of the wrong kind (a text epoch, a list for a mapping, ...) as an ImportRefused
    naming where it is, never a traceback."""
    try:
        yield
    except (TypeError, ValueError, AttributeError, KeyError, OverflowError) as error:
        raise ImportRefused(f"{where}: a field benchyard cannot read ({error})") from None


def _first_scorer(samples: list[dict[str, Any]]) -> str | None:
    for sample in samples:
        scores = sample.get("scores")
        if isinstance(scores, dict) and scores:
            return str(next(iter(scores)))
    return None


def _run_record(
    log: dict[str, Any],
    path: Path,
    benchmark: Benchmark | None,
    agent_name: str | None,
    count: int,
) -> RunRecord:
    from benchyard import __version__

    spec = log["eval"]
    stats = log.get("stats") or {}
    model = str(spec.get("model") or "unknown")
    ids = sorted(
        str(sample_id) for sample_id in (spec.get("dataset") or {}).get("sample_ids") or []
    )
    revision = spec.get("revision") or {}
    status = {"success": "finished", "cancelled": "cancelled", "error": "failed"}.get(
        str(log.get("status")), "failed"
    )
    started = _moment(stats.get("started_at")) or _moment(spec.get("created")) or datetime.now(UTC)
    epochs = (spec.get("config") or {}).get("epochs") or max(
        int(s.get("epoch") or 1) for s in log.get("samples") or [{"epoch": 1}]
    )
    name = agent_name or model.removeprefix("benchyard/")
    if benchmark is not None:
        identity = (benchmark.name, benchmark.version, benchmark.content_hash, str(benchmark.root))
    else:
        digest = hashlib.sha256("\n".join(ids).encode()).hexdigest()
        identity = (
            str(spec.get("task") or "inspect")[:200],
            str(spec.get("task_version", 0))[:100],
            f"inspect:{digest}"[:80],
            str(path.resolve()),
        )
    return RunRecord(
        id=uuid.uuid4().hex[:16],
        status=status,
        benchmark_name=identity[0],
        benchmark_version=identity[1],
        benchmark_hash=identity[2],
        benchmark_path=identity[3],
        agent_name=name[:200],
        agent_config={"kind": "imported", "model": model, "source": "inspect"},
        agent_commit=str(revision["commit"])[:64] if revision.get("commit") else None,
        agent_dirty=revision.get("dirty") if isinstance(revision.get("dirty"), bool) else None,
        settings={
            "epochs": int(epochs),
            "filters": [],
            "limit": None,
            "imported_from": {
                "format": "inspect",
                "file": str(path.resolve()),
                "eval_id": spec.get("eval_id"),
                "task": spec.get("task"),
                "model": model,
            },
        },
        benchyard_version=__version__,
        host="imported",
        started_at=started,
        finished_at=_moment(stats.get("completed_at")) or started,
        planned_attempts=count,
        status_reason=(log.get("error") or {}).get("message") if status == "failed" else None,
    )


def _attempt(
    run: RunRecord,
    sample: dict[str, Any],
    scorer: str | None,
    threshold: float,
    scenarios: dict[str, Any],
) -> AttemptRecord:
    scenario_id = str(sample.get("id"))[:200]
    scenario = scenarios.get(scenario_id)
    metadata = _mapping(sample.get("metadata"))
    category = (
        scenario.category if scenario is not None else str(metadata.get("category") or "general")
    )
    started = _moment(sample.get("started_at")) or run.started_at
    duration = float(sample.get("total_time") or 0.0)
    finished = _moment(sample.get("completed_at")) or started
    answer = _answer(sample)
    verdict, score, cause = _verdict(sample, scorer, threshold)
    tokens_in, tokens_out, cost = _usage(sample)
    events = _events(sample, started)
    return AttemptRecord(
        id=uuid.uuid4().hex[:16],
        run_id=run.id,
        scenario_id=scenario_id,
        category=category[:200],
        epoch=int(sample.get("epoch") or 1),
        try_number=1,
        verdict=verdict,
        score=score,
        started_at=started,
        finished_at=finished,
        duration_sec=duration,
        negative=bool(scenario.negative) if scenario is not None else False,
        cause=cause,
        answer=answer,
        turns=sum(1 for e in events if e.kind == "message" and e.role == "assistant"),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        cost_usd=cost,
        trajectory=events,
    )


def _verdict(
    sample: dict[str, Any], scorer: str | None, threshold: float
) -> tuple[str, float, str | None]:
    error = sample.get("error")
    if isinstance(error, dict) and error.get("message"):
        return "error", 0.0, f"Inspect: {error['message']}"[:4000]
    scores = _mapping(sample.get("scores"))
    found = scores.get(scorer) if scorer is not None else None
    if not isinstance(found, dict):
        return "error", 0.0, f"no '{scorer}' score in the Inspect log"
    value = _value(found.get("value"))
    if value is None:
        return (
            "error",
            0.0,
            f"the '{scorer}' score {found.get('value')!r} is not one benchyard reads",
        )
    passed = value >= threshold
    explanation = found.get("explanation")
    cause = None if passed else str(explanation or f"{scorer}: {found.get('value')!r}")[:4000]
    limit = sample.get("limit")
    if not passed and isinstance(limit, dict) and limit.get("type") in ("time", "working"):
        return "timeout", value, cause or "time limit"
    return ("passed" if passed else "failed"), value, cause


def _value(raw: Any) -> float | None:
    if isinstance(raw, bool):
        return 1.0 if raw else 0.0
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, str):
        letters = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
        if raw in letters:
            return letters[raw]
        try:
            return float(raw)
        except ValueError:
            return None
    if isinstance(raw, dict):
        return next((v for v in map(_value, raw.values()) if v is not None), None)
    if isinstance(raw, list):
        return next((v for v in map(_value, raw) if v is not None), None)
    return None


def _answer(sample: dict[str, Any]) -> str:
    output = _mapping(sample.get("output"))
    if isinstance(output.get("completion"), str) and output["completion"]:
        return str(output["completion"])
    for choice in output.get("choices") or []:
        content = (choice.get("message") or {}).get("content")
        if content:
            return _text(content)
    return ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _usage(sample: dict[str, Any]) -> tuple[int, int, float | None]:
    usage = _mapping(sample.get("model_usage"))
    tokens_in = sum(int(u.get("input_tokens") or 0) for u in usage.values() if isinstance(u, dict))
    tokens_out = sum(
        int(u.get("output_tokens") or 0) for u in usage.values() if isinstance(u, dict)
    )
    costs = [u.get("total_cost") for u in usage.values() if isinstance(u, dict)]
    known = [float(c) for c in costs if isinstance(c, int | float)]
    return tokens_in, tokens_out, (sum(known) if known else None)


def _events(sample: dict[str, Any], started: datetime) -> list[Event]:
    events = []
    moment = started.timestamp()
    for message in sample.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role") or "")
        content = _text(message.get("content"))
        if role == "tool":
            events.append(
                Event(
                    kind="tool_result",
                    role="tool",
                    content=content,
                    ts=moment,
                    data={
                        "imported_tool": str(message.get("function") or ""),
                        "call_id": str(message.get("tool_call_id") or ""),
                    },
                )
            )
            continue
        events.append(Event(kind="message", role=role, content=content, ts=moment))
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                events.append(
                    Event(
                        kind="tool_call",
                        role="assistant",
                        content=f"{call.get('function')}({json.dumps(call.get('arguments'))})",
                        ts=moment,
                        data={
                            "imported_tool": str(call.get("function")),
                            "call_id": call.get("id"),
                        },
                    )
                )
    return events


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _moment(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
