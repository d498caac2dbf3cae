"""The run listing, its queries written once as SQL text that any `Reader` (store/lite.py) runs:
`benchyard runs` reads a SQLite store through `sqlite3` with them, and the `Store`, the web UI and
the watchdog's counts (`Store.list_runs`, `Store.verdict_counts`, store/browse.py) through
SQLAlchemy. Runs newest first with each run's final attempts by verdict and by node, its queued
attempts by state, and a speed run's measured calls."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from benchyard.store.lite import Reader, in_list, json_value
from benchyard.store.records import RunRecord

RUN_COLUMNS = tuple(f.name for f in fields(RunRecord))
_JSON_COLUMNS = ("agent_config", "settings")
_BOOLEAN_COLUMNS = ("agent_dirty",)
_MOMENT_COLUMNS = ("started_at", "finished_at")
_NEWEST_FIRST = "ORDER BY started_at DESC, id DESC"


def list_runs(
    reader: Reader, limit: int | None = None, benchmark: str | None = None
) -> list[RunRecord]:
    """Runs newest first (of one benchmark, when given), the first `limit` of them."""
    sql = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs"
    params: dict[str, Any] = {}
    if benchmark:
        sql += " WHERE benchmark_name = :benchmark"
        params["benchmark"] = benchmark
    sql += f" {_NEWEST_FIRST}"
    if limit:
        sql += " LIMIT :limit"
        params["limit"] = limit
    return [run_from_values(row) for row in reader.rows(sql, params)]


def run_from_values(row: Sequence[Any]) -> RunRecord:
    """A run from its RUN_COLUMNS as either driver hands them back."""
    values = dict(zip(RUN_COLUMNS, row, strict=True))
    for name in _JSON_COLUMNS:
        values[name] = json_value(values[name])
    for name in _BOOLEAN_COLUMNS:
        if values[name] is not None:
            values[name] = bool(values[name])
    for name in _MOMENT_COLUMNS:
        values[name] = moment(values[name])
    return RunRecord(**values)


def moment(value: datetime | str | None) -> datetime | None:
    """SQLite keeps a moment as naive text; everything benchyard writes is UTC."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def verdict_counts(reader: Reader, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """Final attempts per verdict for each run, in one query."""
    return _final_attempts_by(reader, "verdict", run_ids)


def node_counts(reader: Reader, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """Final attempts per node for each run (where they ran; runs recorded before nodes were
    kept have none), in one query."""
    return _final_attempts_by(reader, "node", run_ids)


def _final_attempts_by(
    reader: Reader, column: str, run_ids: Sequence[str]
) -> dict[str, dict[str, int]]:
    """Each run's final attempts counted by `column` (a column name of ours, never input);
    attempts where it is null are left out."""
    if not run_ids:
        return {}
    params: dict[str, Any] = {"superseded": False}
    sql = (
        f"SELECT run_id, {column}, count(*) FROM attempts"
        f" WHERE run_id IN ({in_list('run', run_ids, params)}) AND superseded = :superseded"
        f" AND {column} IS NOT NULL GROUP BY run_id, {column} ORDER BY run_id, {column}"
    )
    counts: dict[str, dict[str, int]] = {}
    for run_id, value, count in reader.rows(sql, params):
        counts.setdefault(str(run_id), {})[str(value)] = int(count)
    return counts


@dataclass(frozen=True)
class QueueCounts:
    run_id: str
    queued: int = 0
    claimed: int = 0
    done: int = 0
    cancelled: int = 0
    stuck: int = 0  # claimed attempts their worker's watchdog found stuck (runner/watchdog.py)


def queue_counts(reader: Reader, run_ids: Sequence[str]) -> dict[str, QueueCounts]:
    """Each run's queued attempts by state, and its stuck ones, in one query."""
    if not run_ids:
        return {}
    params: dict[str, Any] = {}
    sql = (
        "SELECT run_id, state, count(*), count(stuck_since) FROM attempt_queue"
        f" WHERE run_id IN ({in_list('run', run_ids, params)}) GROUP BY run_id, state"
    )
    raw: dict[str, dict[str, int]] = {}
    for run_id, state, count, stuck in reader.rows(sql, params):
        counts = raw.setdefault(run_id, {})
        counts[state] = int(count)
        if state == "claimed":
            counts["stuck"] = int(stuck)
    return {run_id: QueueCounts(run_id, **states) for run_id, states in raw.items()}


def run_status_text(status: str, counts: QueueCounts | None) -> str:
    """A run's status, with its stuck attempts when it has any: `running (2 stuck)`."""
    return f"{status} ({counts.stuck} stuck)" if counts and counts.stuck else status


def speed_calls(reader: Reader, run_ids: Sequence[str]) -> dict[str, int]:
    """The calls each speed run (`benchyard speed`, table `speed_samples`) made, warm-ups
    included, in one query."""
    if not run_ids:
        return {}
    params: dict[str, Any] = {}
    sql = (
        "SELECT run_id, count(*) FROM speed_samples"
        f" WHERE run_id IN ({in_list('run', run_ids, params)}) GROUP BY run_id"
    )
    return {run_id: int(count) for run_id, count in reader.rows(sql, params)}


@dataclass
class RunListing:
    """What `benchyard runs` prints: the runs, newest first, and their counts by run id."""

    runs: list[RunRecord]
    verdicts: dict[str, dict[str, int]] = field(default_factory=dict)
    nodes: dict[str, dict[str, int]] = field(default_factory=dict)
    queued: dict[str, QueueCounts] = field(default_factory=dict)
    speed_calls: dict[str, int] = field(default_factory=dict)  # of its speed runs only


SPEED_KIND = "speed"  # runs.kind of a speed run (speed/records.py)


def run_listing(reader: Reader, limit: int | None, benchmark: str | None) -> RunListing:
    listed = list_runs(reader, limit, benchmark)
    ids = [run.id for run in listed]
    speed = [run.id for run in listed if run.kind == SPEED_KIND]
    calls = speed_calls(reader, speed)
    return RunListing(
        listed,
        verdict_counts(reader, ids),
        node_counts(reader, ids),
        queue_counts(reader, ids),
        {run_id: calls.get(run_id, 0) for run_id in speed},
    )
