"""Read queries for browsing the store (the web UI): pages of runs and of attempts, filtered,
sorted and counted in SQL; a run's figures as SQL aggregates; one attempt with all its tries; the
state of the queue. Nothing here loads a whole run into Python: every list is a LIMIT/OFFSET page
and every figure over a run is an aggregate the database computes.

The review flags are the ones report/flags.py raises, written as SQL conditions (tests hold the two
together): `long`, `near_threshold`, `hit_max_turns`, `suspicious_patch` and `flaky`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    and_,
    case,
    exists,
    func,
    or_,
    select,
)

from benchyard.errors import BenchyardError
from benchyard.store import figures, run_list
from benchyard.store.figures import COUNTED as COUNTED
from benchyard.store.figures import FLAG_KINDS as FLAG_KINDS
from benchyard.store.figures import LONG_FACTOR as LONG_FACTOR
from benchyard.store.figures import LONG_FLOOR as LONG_FLOOR
from benchyard.store.figures import NEAR_MARGIN as NEAR_MARGIN
from benchyard.store.figures import PERCENTILES as PERCENTILES
from benchyard.store.figures import SUSPICIOUS_PATCH as SUSPICIOUS_PATCH
from benchyard.store.figures import CheckTally as CheckTally
from benchyard.store.figures import RunFigureTallies as RunFigureTallies
from benchyard.store.figures import VerdictGroup as VerdictGroup
from benchyard.store.records import AttemptRecord, CheckRecord, RunRecord
from benchyard.store.run_list import QueueCounts as QueueCounts
from benchyard.store.run_list import moment
from benchyard.store.run_list import run_status_text as run_status_text
from benchyard.store.schema import attempt_queue, attempts, check_results, runs
from benchyard.store.search import matching
from benchyard.store.store import Store, attempt_from_row, checks_of, run_from_row

FlagKind = Literal["long", "flaky", "near_threshold", "hit_max_turns", "suspicious_patch"]
SortKey = Literal["scenario", "category", "verdict", "score", "duration", "turns", "cost", "tokens"]
SORT_KEYS: tuple[SortKey, ...] = (
    "scenario",
    "category",
    "verdict",
    "score",
    "duration",
    "turns",
    "cost",
    "tokens",
)
MAX_PAGE = 500

a = attempts
cr = check_results
q = attempt_queue

# The columns of an attempts-table row: everything but the large text and blobs.
_ROW_COLUMNS = (
    a.c.id,
    a.c.run_id,
    a.c.scenario_id,
    a.c.category,
    a.c.epoch,
    a.c.try_number,
    a.c.superseded,
    a.c.verdict,
    a.c.score,
    a.c.cause,
    a.c.failure_kind,
    a.c.negative,
    a.c.turns,
    a.c.user_turns,
    a.c.hit_max_turns,
    a.c.tokens_in,
    a.c.tokens_out,
    a.c.cost_usd,
    a.c.judge_tokens_in,
    a.c.judge_tokens_out,
    a.c.judge_cost_usd,
    a.c.started_at,
    a.c.finished_at,
    a.c.duration_sec,
    a.c.threshold,
    a.c.stdout_dropped_bytes,
    a.c.stderr_dropped_bytes,
)


class AttemptNotFound(BenchyardError):
    """No attempt (try) with that id."""


# ---- runs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunFilter:
    """Which runs to list; every field is optional. `version` matches a benchmark version or a
    prefix of its content hash, `commit` a prefix of the agent's commit."""

    benchmark: str | None = None
    version: str | None = None
    agent: str | None = None
    commit: str | None = None
    status: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    ids: tuple[str, ...] = ()  # these runs only


@dataclass(frozen=True)
class RunTally:
    """A run's final attempts counted by verdict, with their cost and time."""

    run_id: str
    passed: int = 0
    failed: int = 0
    timeouts: int = 0
    errors: int = 0
    cost_usd: float | None = None
    judge_cost_usd: float | None = None
    attempt_sec: float = 0.0

    @property
    def counted(self) -> int:
        return self.passed + self.failed + self.timeouts

    @property
    def attempts(self) -> int:
        return self.counted + self.errors


@dataclass(frozen=True)
class RunChoices:
    """The values the runs' filters can take in this store."""

    benchmarks: list[str]
    agents: list[str]
    statuses: list[str]


RunSortKey = Literal["started", "benchmark", "agent", "commit", "status", "attempts", "accuracy"]
RUN_SORT_KEYS: tuple[RunSortKey, ...] = (
    "started",
    "benchmark",
    "agent",
    "commit",
    "status",
    "attempts",
    "accuracy",
)


def _run_accuracy() -> ColumnElement[Any]:
    """A run's accuracy as a correlated subquery: its final passed attempts over its final passed,
    failed and timed-out ones (errors left out, as everywhere); null when none is counted."""
    passed = case((a.c.verdict == "passed", 1.0), else_=0.0)
    return (
        select(func.avg(passed))
        .where(a.c.run_id == runs.c.id, a.c.superseded.is_(False), a.c.verdict.in_(COUNTED))
        .scalar_subquery()
    )


_RUN_SORT_COLUMNS: dict[str, ColumnElement[Any]] = {
    "started": runs.c.started_at,
    "benchmark": runs.c.benchmark_name,
    "agent": runs.c.agent_name,
    "commit": runs.c.agent_commit,
    "status": runs.c.status,
    "attempts": runs.c.planned_attempts,
    "accuracy": _run_accuracy(),
}


def list_runs(
    store: Store,
    where: RunFilter,
    *,
    limit: int = 50,
    offset: int = 0,
    sort: RunSortKey = "started",
    descending: bool = True,
) -> tuple[list[RunRecord], int]:
    """A page of runs (newest first unless `sort` says otherwise), and how many match in all."""
    conditions = _run_conditions(where)
    column = _RUN_SORT_COLUMNS[sort]
    first = (column.desc() if descending else column.asc()).nulls_last()
    query = (
        select(runs).where(*conditions).order_by(first, runs.c.started_at.desc(), runs.c.id.desc())
    )
    count = select(func.count()).select_from(runs).where(*conditions)
    with store.engine.connect() as connection:
        rows = connection.execute(query.limit(_bounded(limit)).offset(max(0, offset))).all()
        total = int(connection.execute(count).scalar_one())
    return [run_from_row(row) for row in rows], total


def _run_conditions(where: RunFilter) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if where.benchmark:
        conditions.append(runs.c.benchmark_name == where.benchmark)
    if where.version:
        conditions.append(
            or_(
                runs.c.benchmark_version == where.version,
                runs.c.benchmark_hash.startswith(where.version, autoescape=True),
                runs.c.benchmark_hash.startswith("sha256:" + where.version, autoescape=True),
            )
        )
    if where.agent:
        conditions.append(runs.c.agent_name == where.agent)
    if where.commit:
        conditions.append(runs.c.agent_commit.startswith(where.commit, autoescape=True))
    if where.status:
        conditions.append(runs.c.status == where.status)
    if where.since:
        conditions.append(runs.c.started_at >= where.since)
    if where.until:
        conditions.append(runs.c.started_at < where.until)
    if where.ids:
        conditions.append(runs.c.id.in_(where.ids))
    return conditions


def run_choices(store: Store) -> RunChoices:
    with store.engine.connect() as connection:

        def values(column: Any) -> list[str]:
            rows = connection.execute(select(column).distinct().order_by(column)).scalars()
            return [str(value) for value in rows if value is not None]

        return RunChoices(
            benchmarks=values(runs.c.benchmark_name),
            agents=values(runs.c.agent_name),
            statuses=values(runs.c.status),
        )


def run_tallies(store: Store, run_ids: Sequence[str]) -> dict[str, RunTally]:
    """Each run's final attempts by verdict, with cost and attempt time, in one query."""
    if not run_ids:
        return {}
    query = (
        select(
            a.c.run_id,
            a.c.verdict,
            func.count(),
            func.sum(a.c.cost_usd),
            func.sum(a.c.judge_cost_usd),
            func.sum(a.c.duration_sec),
        )
        .where(a.c.run_id.in_(list(run_ids)), a.c.superseded.is_(False))
        .group_by(a.c.run_id, a.c.verdict)
    )
    counts: dict[str, dict[str, Any]] = {}
    with store.engine.connect() as connection:
        for run_id, verdict, count, cost, judge_cost, seconds in connection.execute(query):
            tally = counts.setdefault(run_id, {"run_id": run_id, "attempt_sec": 0.0})
            key = {"passed": "passed", "failed": "failed", "timeout": "timeouts"}.get(
                verdict, "errors"
            )
            tally[key] = tally.get(key, 0) + int(count)
            tally["cost_usd"] = _add(tally.get("cost_usd"), cost)
            tally["judge_cost_usd"] = _add(tally.get("judge_cost_usd"), judge_cost)
            tally["attempt_sec"] += float(seconds or 0.0)
    return {run_id: RunTally(**values) for run_id, values in counts.items()}


@dataclass(frozen=True)
class CategoryTally:
    passed: int = 0
    counted: int = 0
    errors: int = 0


def category_tallies(store: Store, run_ids: Sequence[str]) -> dict[str, dict[str, CategoryTally]]:
    """Each run's final attempts by category: passed, counted and errors, in one query."""
    if not run_ids:
        return {}
    query = (
        select(a.c.run_id, a.c.category, a.c.verdict, func.count())
        .where(a.c.run_id.in_(list(run_ids)), a.c.superseded.is_(False))
        .group_by(a.c.run_id, a.c.category, a.c.verdict)
    )
    raw: dict[str, dict[str, list[int]]] = {}
    with store.engine.connect() as connection:
        for run_id, category, verdict, count in connection.execute(query):
            tally = raw.setdefault(run_id, {}).setdefault(category, [0, 0, 0])
            if verdict in COUNTED:
                tally[1] += int(count)
                tally[0] += int(count) if verdict == "passed" else 0
            else:
                tally[2] += int(count)
    return {
        run_id: {name: CategoryTally(*values) for name, values in sorted(categories.items())}
        for run_id, categories in raw.items()
    }


def _add(total: float | None, value: Any) -> float | None:
    if value is None:
        return total
    return float(value) + (total or 0.0)


# ---- one run's figures -----------------------------------------------------------------------


def figure_tallies(store: Store, run_id: str) -> RunFigureTallies:
    """A run's final attempts counted every way its summary needs (store/figures.py's queries),
    with every review flag counted: `long` and `hit_max_turns` in the groups' pass, the others
    here."""
    tallies = figures.figure_tallies(store.reader, run_id)
    max_epoch = max((group.max_epoch for group in tallies.groups), default=0)
    flags = {
        "long": sum(group.long for group in tallies.groups),
        "hit_max_turns": sum(group.hit_max_turns for group in tallies.groups),
    }
    with store.engine.connect() as connection:
        for kind in ("near_threshold", "suspicious_patch", "flaky"):
            flags[kind] = _flag_count(connection, run_id, kind, tallies.median_turns, max_epoch)
    return dataclasses.replace(tallies, flags={kind: flags[kind] for kind in FLAG_KINDS})


def _final(run_id: str) -> tuple[ColumnElement[bool], ...]:
    return a.c.run_id == run_id, a.c.superseded.is_(False)


def _count(connection: Connection, query: Select[Any]) -> int:
    return int(connection.execute(query).scalar_one() or 0)


def _as_int(expression: ColumnElement[Any]) -> ColumnElement[int]:
    return case((expression, 1), else_=0)


def flag_condition(
    run_id: str, kind: str, median_turns: float, margin: float = NEAR_MARGIN
) -> ColumnElement[bool]:
    """The final attempts of `run_id` that report/flags.py flags as `kind` (for `flaky`: the
    counted attempts of flaky scenarios)."""
    counted = a.c.verdict.in_(COUNTED)
    if kind == "hit_max_turns":
        return a.c.hit_max_turns.is_(True)
    if kind == "long":
        return and_(counted, a.c.turns - a.c.user_turns > figures.long_limit(median_turns))
    if kind == "near_threshold":
        return or_(_near_own_threshold(margin), _near_check_threshold(margin))
    if kind == "suspicious_patch":
        return exists().where(
            cr.c.attempt_id == a.c.id, cr.c.reason.contains(SUSPICIOUS_PATCH, autoescape=True)
        )
    if kind == "flaky":
        return and_(counted, a.c.scenario_id.in_(_flaky_scenarios(run_id)))
    raise ValueError(f"unknown review flag '{kind}' (known: {', '.join(FLAG_KINDS)})")


def _near_own_threshold(margin: float) -> ColumnElement[bool]:
    return and_(
        a.c.verdict.in_(("passed", "failed")),
        a.c.threshold.is_not(None),
        a.c.score > 0,
        a.c.score < 1,
        func.abs(a.c.score - a.c.threshold) <= margin,
    )


def _near_check_threshold(margin: float) -> ColumnElement[bool]:
    return exists().where(
        cr.c.attempt_id == a.c.id,
        cr.c.threshold.is_not(None),
        cr.c.score > 0,
        cr.c.score < 1,
        func.abs(cr.c.score - cr.c.threshold) <= margin,
    )


def _flaky_scenarios(run_id: str) -> Select[Any]:
    passed = func.sum(_as_int(a.c.verdict == "passed"))
    return (
        select(a.c.scenario_id)
        .where(*_final(run_id), a.c.verdict.in_(COUNTED))
        .group_by(a.c.scenario_id)
        .having(and_(passed > 0, passed < func.count()))
    )


def _flag_count(
    connection: Connection, run_id: str, kind: str, median: float, max_epoch: int
) -> int:
    if kind == "flaky":
        if max_epoch < 2:
            return 0  # one attempt per scenario: nothing can be flaky
        return _count(
            connection, select(func.count()).select_from(_flaky_scenarios(run_id).subquery())
        )
    condition = flag_condition(run_id, kind, median)
    return _count(connection, select(func.count()).where(*_final(run_id), condition))


def flaky_among(store: Store, run_id: str, scenario_ids: Sequence[str]) -> set[str]:
    """Which of these scenarios are flaky in the run (some counted epochs passed, some not)."""
    if not scenario_ids:
        return set()
    query = _flaky_scenarios(run_id).where(a.c.scenario_id.in_(list(scenario_ids)))
    with store.engine.connect() as connection:
        return {str(value) for value in connection.execute(query).scalars()}


# ---- pages of attempts -----------------------------------------------------------------------


@dataclass(frozen=True)
class AttemptQuery:
    """A page of a run's final attempts: filters, sort and window."""

    verdicts: tuple[str, ...] = ()
    category: str | None = None
    flag: str | None = None  # a review flag kind, or "any"
    check: str | None = None  # a check type the attempt has
    check_outcome: Literal["passed", "failed"] | None = None  # ... with this outcome
    scenario: str | None = None  # a part of the scenario id
    search: str | None = None  # full text (store/search.py; the run indexed first)
    sort: SortKey = "scenario"
    descending: bool = False
    limit: int = 50
    offset: int = 0

    @property
    def filtered(self) -> bool:
        return bool(
            self.verdicts
            or self.category
            or self.flag
            or self.check
            or self.scenario
            or self.search
        )


@dataclass(frozen=True)
class AttemptPage:
    rows: list[AttemptRecord]
    total: int  # attempts matching the filters, over all pages


_SORT_COLUMNS: dict[str, ColumnElement[Any]] = {
    "scenario": a.c.scenario_id,
    "category": a.c.category,
    "verdict": a.c.verdict,
    "score": a.c.score,
    "duration": a.c.duration_sec,
    "turns": a.c.turns,
    "cost": a.c.cost_usd,
    "tokens": a.c.tokens_in + a.c.tokens_out,
}


def attempt_page(
    store: Store,
    run_id: str,
    query: AttemptQuery,
    *,
    median_turns: float | None = None,
    total: int | None = None,
) -> AttemptPage:
    """One page of the final attempts of a run, with their check results. `median_turns` (for the
    `long` flag) and `total` (how many match the query, known to the caller from the run's
    figures) are read from the database when not given."""
    if median_turns is None and query.flag in ("long", "any"):
        median_turns = figures.median_counted_turns(store.reader, run_id)
    with store.engine.connect() as connection:
        conditions = [*_final(run_id), *_attempt_conditions(run_id, query, median_turns or 0)]
        if query.search:
            found = matching(connection.dialect.name, run_id, query.search)
            conditions.append(a.c.id.in_(found))
        rows = connection.execute(
            select(*_ROW_COLUMNS)
            .where(*conditions)
            .order_by(*_order(query))
            .limit(_bounded(query.limit))
            .offset(max(0, query.offset))
        ).all()
        if total is None:
            total = _count(connection, select(func.count()).where(*conditions))
        checks = checks_of(store.database, [row.id for row in rows])
    return AttemptPage([attempt_from_row(row, checks.get(row.id, [])) for row in rows], total)


def _attempt_conditions(
    run_id: str, query: AttemptQuery, median_turns: float
) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if query.verdicts:
        conditions.append(a.c.verdict.in_(query.verdicts))
    if query.category:
        conditions.append(a.c.category == query.category)
    if query.scenario:
        conditions.append(a.c.scenario_id.contains(query.scenario, autoescape=True))
    if query.flag == "any":
        conditions.append(or_(*(flag_condition(run_id, k, median_turns) for k in FLAG_KINDS)))
    elif query.flag:
        conditions.append(flag_condition(run_id, query.flag, median_turns))
    if query.check:
        having = [cr.c.attempt_id == a.c.id, cr.c.check_type == query.check]
        if query.check_outcome is not None:
            having.append(cr.c.passed.is_(query.check_outcome == "passed"))
        conditions.append(exists().where(*having))
    return conditions


def _order(query: AttemptQuery) -> list[Any]:
    column = _SORT_COLUMNS.get(query.sort, a.c.scenario_id)
    first = column.desc() if query.descending else column.asc()
    if query.sort == "cost":
        first = first.nulls_last()
    # A run has one final attempt per scenario and epoch: these make the order total.
    tie: list[Any] = [a.c.scenario_id, a.c.epoch]
    if query.sort == "scenario" and query.descending:
        tie = [a.c.scenario_id.desc(), a.c.epoch.desc()]
    return [first, *tie]


def _bounded(limit: int) -> int:
    return max(1, min(MAX_PAGE, limit))


# ---- one attempt -----------------------------------------------------------------------------


def final_attempt_id(store: Store, run_id: str, scenario_id: str, epoch: int) -> str | None:
    """The final try of a scenario's epoch in a run (None when the run has none)."""
    with store.engine.connect() as connection:
        found = connection.execute(
            select(a.c.id).where(
                *_final(run_id), a.c.scenario_id == scenario_id, a.c.epoch == epoch
            )
        ).scalar()
    return None if found is None else str(found)


def attempt_run_id(store: Store, attempt_id: str) -> str:
    """The run a try belongs to."""
    with store.engine.connect() as connection:
        run_id = connection.execute(select(a.c.run_id).where(a.c.id == attempt_id)).scalar()
    if run_id is None:
        raise AttemptNotFound(f"no attempt '{attempt_id}'")
    return str(run_id)


def attempt_tries(store: Store, attempt_id: str) -> list[AttemptRecord]:
    """Every try of the attempt that try `attempt_id` belongs to (same run, scenario and epoch),
    superseded ones included, oldest first, each with its evidence (answer, output, trajectory,
    patch) and check results."""
    with store.engine.connect() as connection:
        key = connection.execute(
            select(a.c.run_id, a.c.scenario_id, a.c.epoch).where(a.c.id == attempt_id)
        ).first()
        if key is None:
            raise AttemptNotFound(f"no attempt '{attempt_id}'")
        rows = connection.execute(
            select(a)
            .where(
                a.c.run_id == key.run_id,
                a.c.superseded.in_((False, True)),  # both, through an index that leads with it
                a.c.scenario_id == key.scenario_id,
                a.c.epoch == key.epoch,
            )
            .order_by(a.c.try_number, a.c.id)
        ).all()
        checks = checks_of(store.database, [row.id for row in rows])
    return [_with_evidence(row, checks.get(row.id, [])) for row in rows]


def _with_evidence(row: Any, checks: Iterable[CheckRecord]) -> AttemptRecord:
    return attempt_from_row(row, checks, with_evidence=True)


# ---- the queue -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunProgress:
    """Where a run stands: its queued attempts by state, and its final attempts by verdict."""

    run_id: str
    status: str
    planned: int
    queued: int
    claimed: int
    done: int
    cancelled: int
    verdicts: dict[str, int]
    stuck: int = 0

    @property
    def finished(self) -> int:
        return sum(self.verdicts.values())


def run_progress(store: Store, run: RunRecord) -> RunProgress:
    with store.engine.connect() as connection:
        status = connection.execute(select(runs.c.status).where(runs.c.id == run.id)).scalar()
    counts = queue_counts(store, [run.id]).get(run.id, QueueCounts(run.id))
    verdicts = store.verdict_counts([run.id]).get(run.id, {})
    return RunProgress(
        run_id=run.id,
        status=str(status or run.status),
        planned=run.planned_attempts,
        queued=counts.queued,
        claimed=counts.claimed,
        done=counts.done,
        cancelled=counts.cancelled,
        verdicts=verdicts,
        stuck=counts.stuck,
    )


def queue_counts(store: Store, run_ids: Sequence[str]) -> dict[str, QueueCounts]:
    """Each run's queued attempts by state, and its stuck ones, in one query."""
    return run_list.queue_counts(store.reader, run_ids)


def queue_runs(store: Store, *, limit: int = 20) -> list[RunRecord]:
    """Runs with queued or claimed attempts, then the latest others that went through the queue,
    newest first."""
    open_runs = select(q.c.run_id).where(q.c.state.in_(("queued", "claimed"))).distinct()
    with store.engine.connect() as connection:
        active = connection.execute(
            select(runs)
            .where(or_(runs.c.id.in_(open_runs), runs.c.status.in_(("queued", "running"))))
            .order_by(runs.c.started_at.desc())
        ).all()
        recent = connection.execute(
            select(runs)
            .where(runs.c.id.in_(select(q.c.run_id).distinct()))
            .order_by(runs.c.started_at.desc(), runs.c.id.desc())
            .limit(limit)
        ).all()
    seen: dict[str, RunRecord] = {}
    for row in [*active, *recent]:
        seen.setdefault(row.id, run_from_row(row))
    return list(seen.values())


def rescore_runs(
    store: Store, *, of: str | None = None, since: datetime | None = None, limit: int = 20
) -> list[RunRecord]:
    """Runs made by `benchyard rescore` (which goes through no queue), newest first: of the run
    `of` only, started at `since` or later."""
    conditions: list[ColumnElement[bool]] = [runs.c.rescored_from.is_not(None)]
    if of is not None:
        conditions.append(runs.c.rescored_from == of)
    if since is not None:
        conditions.append(runs.c.started_at >= since)
    query = (
        select(runs)
        .where(*conditions)
        .order_by(runs.c.started_at.desc(), runs.c.id.desc())
        .limit(_bounded(limit))
    )
    with store.engine.connect() as connection:
        return [run_from_row(row) for row in connection.execute(query)]


@dataclass(frozen=True)
class QueuedAttempt:
    id: int
    run_id: str
    scenario_id: str
    epoch: int
    state: str
    tries: int
    claims: int
    worker: str | None
    node: str | None  # the Ray node it runs on, once started there (docs/distributed.md)
    lease_expires_at: datetime | None


def node_counts(store: Store, run_ids: Sequence[str]) -> dict[str, dict[str, int]]:
    """Final attempts per node for each run, in one query."""
    return run_list.node_counts(store.reader, run_ids)


def open_attempts(store: Store, *, limit: int = 100) -> list[QueuedAttempt]:
    """Claimed attempts first, then queued ones, oldest first within each."""
    query = (
        select(
            q.c.id,
            q.c.run_id,
            q.c.scenario_id,
            q.c.epoch,
            q.c.state,
            q.c.tries,
            q.c.claims,
            q.c.worker,
            q.c.node,
            q.c.lease_expires_at,
        )
        .where(q.c.state.in_(("claimed", "queued")))
        .order_by(case((q.c.state == "claimed", 0), else_=1), q.c.id)
        .limit(_bounded(limit))
    )
    with store.engine.connect() as connection:
        return [
            QueuedAttempt(**{**row._asdict(), "lease_expires_at": moment(row.lease_expires_at)})
            for row in connection.execute(query)
        ]


@dataclass(frozen=True)
class WorkerClaims:
    """A worker seen through the claims it holds: its lease deadline moves with each heartbeat."""

    worker: str
    node: str | None
    pid: int | None
    held: int
    lease_expires_at: datetime | None
    nodes: dict[str, int] = field(default_factory=dict)  # where its attempts run (Ray), how many


def workers(store: Store) -> list[WorkerClaims]:
    query = (
        select(
            q.c.worker,
            func.max(q.c.worker_node),
            func.max(q.c.worker_pid),
            func.count(),
            func.max(q.c.lease_expires_at),
        )
        .where(q.c.state == "claimed", q.c.worker.is_not(None))
        .group_by(q.c.worker)
        .order_by(q.c.worker)
    )
    placed = (
        select(q.c.worker, q.c.node, func.count())
        .where(q.c.state == "claimed", q.c.worker.is_not(None), q.c.node.is_not(None))
        .group_by(q.c.worker, q.c.node)
    )
    with store.engine.connect() as connection:
        nodes: dict[str, dict[str, int]] = {}
        for worker, node, count in connection.execute(placed):
            nodes.setdefault(str(worker), {})[str(node)] = int(count)
        return [
            WorkerClaims(
                str(worker), node, pid, int(held), moment(lease), nodes.get(str(worker), {})
            )
            for worker, node, pid, held, lease in connection.execute(query)
        ]


# ---- rows to records -------------------------------------------------------------------------

# ---- benchmarks ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedBenchmark:
    """A benchmark as runs recorded it: its name, the path of its newest run, and how many runs."""

    name: str
    path: str
    runs: int
    latest_started_at: datetime | None


def recorded_benchmarks(store: Store) -> list[RecordedBenchmark]:
    newest = (
        select(runs.c.benchmark_name, func.max(runs.c.started_at).label("latest"), func.count())
        .group_by(runs.c.benchmark_name)
        .subquery()
    )
    query = (
        select(runs.c.benchmark_name, runs.c.benchmark_path, newest.c[2], newest.c.latest)
        .join(
            newest,
            and_(
                newest.c.benchmark_name == runs.c.benchmark_name,
                newest.c.latest == runs.c.started_at,
            ),
        )
        .order_by(runs.c.benchmark_name)
    )
    found: dict[str, RecordedBenchmark] = {}
    with store.engine.connect() as connection:
        for name, path, count, latest in connection.execute(query):
            found.setdefault(name, RecordedBenchmark(name, path, int(count), moment(latest)))
    return list(found.values())
