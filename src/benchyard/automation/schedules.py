"""Schedules: a benchmark run against a declared agent at the times a cron expression names (UTC).

A schedule records what a run records (the agent's configuration, the run's settings, the
benchmark's path) when it is added. `benchyard worker` looks at the schedules every few seconds
(`fire_due`): a schedule whose next firing is due is claimed in one transaction (`SELECT ... FOR
UPDATE SKIP LOCKED` on PostgreSQL, `BEGIN IMMEDIATE` on SQLite), its next firing moved past now and
the firing recorded under a unique (schedule, due time) key, so that however many workers look at
once, one of them handles it. The run is then queued like `benchyard run --enqueue`.

Firings no worker saw in time (no worker was running) follow the schedule's `missed` policy:

- a firing handled within `grace_sec` of its time is on time: one run, whatever earlier firings
  were missed (they are counted on the firing, never run one after another);
- otherwise the latest firing is late: `once` queues one run now, `skip` queues none (the firing is
  recorded as skipped) and waits for the next one.

When a scheduled run ends (automation/after_run.py) it is compared with the previous run of the
same schedule, as `benchyard compare PREVIOUS RUN` would, and the outcome recorded on its firing.
"""

from __future__ import annotations

import functools
import getpass
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, TypeVar

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from benchyard.errors import BenchyardError
from benchyard.store.database import EngineDatabase
from benchyard.store.records import RunRecord
from benchyard.store.run_list import moment
from benchyard.store.schema import runs, schedule_firings, schedules
from benchyard.store.store import Store

MissedPolicy = Literal["skip", "once"]
MISSED_POLICIES: tuple[MissedPolicy, ...] = ("skip", "once")
DEFAULT_GRACE_SEC = 600.0
T = TypeVar("T")


class ScheduleRefused(BenchyardError):
    """A schedule that cannot be added or found as asked."""


@dataclass(frozen=True)
class Schedule:
    id: str
    benchmark: str
    agent_name: str
    agent_config: dict[str, Any]
    agent_repo: str | None
    settings: dict[str, Any]
    cron: str
    missed: str
    grace_sec: float
    created_at: datetime
    created_by: str
    next_due_at: datetime


@dataclass(frozen=True)
class Firing:
    id: int
    schedule_id: str
    due_at: datetime
    handled_at: datetime
    action: str  # claimed | enqueued | skipped | refused
    missed: int
    run_id: str | None
    baseline_run_id: str | None
    regression: bool | None
    detail: str | None


# ---- adding, listing, removing ---------------------------------------------------------------


def add_schedule(
    store: Store,
    benchmark_ref: str,
    agent_name: str,
    agent_config: dict[str, Any],
    settings: dict[str, Any],
    cron: str,
    *,
    missed: str = "once",
    grace_sec: float = DEFAULT_GRACE_SEC,
    agent_repo: Path | None = None,
    created_by: str | None = None,
    now: datetime | None = None,
) -> Schedule:
    """Record a schedule; its first firing is the first time the cron expression names after
    `now`. The agent and settings are recorded as a run records them (secrets scrubbed); the
    caller checked that the run could be planned and queued (cli, `plan_scheduled_run`)."""
    from benchyard import secrets
    from benchyard.automation.cron import Cron  # croniter and dateutil: only where cron is read

    parsed = Cron.parse(cron)
    if missed not in MISSED_POLICIES:
        raise ScheduleRefused(f"--missed takes skip or once, not '{missed}'")
    if grace_sec < 0:
        raise ScheduleRefused("--grace-sec takes a number of seconds, 0 or more")
    at = now or datetime.now(UTC)
    schedule = Schedule(
        id=uuid.uuid4().hex[:16],
        benchmark=benchmark_ref,
        agent_name=agent_name,
        agent_config=secrets.scrub_value(agent_config),
        agent_repo=str(agent_repo) if agent_repo else None,
        settings=secrets.scrub_value(settings),
        cron=parsed.expression,
        missed=missed,
        grace_sec=float(grace_sec),
        created_at=at,
        created_by=(created_by or _who())[:200],
        next_due_at=parsed.next_after(at),
    )
    with store.engine.begin() as connection:
        connection.execute(insert(schedules).values(**vars(schedule)))
    return schedule


def plan_scheduled_run(
    benchmark_ref: str, agent_name: str, agent_config: dict[str, Any], settings: dict[str, Any]
) -> tuple[Any, Any, Any, Any]:
    """The benchmark, agent, settings and plan of a run of this schedule now: what `add` checks
    before recording a schedule and what each firing queues."""
    from benchyard.agents.registry import build_agent
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.runner.api import plan_run
    from benchyard.runner.execute import RunSettings

    benchmark = load_benchmark(benchmark_ref)
    agent = build_agent(agent_name, agent_config)
    known = set(RunSettings.__dataclass_fields__)
    values = {key: value for key, value in settings.items() if key in known}
    values["filters"] = tuple(values.get("filters", ()))
    run_settings = RunSettings(**values)
    return benchmark, agent, run_settings, plan_run(benchmark, run_settings)


def list_schedules(store: Store) -> list[Schedule]:
    with store.engine.connect() as connection:
        rows = connection.execute(select(schedules).order_by(schedules.c.created_at)).all()
    return [_schedule(row) for row in rows]


def find_schedule(store: Store, reference: str) -> Schedule:
    """A schedule by id or unique id prefix."""
    if not reference or not all(c in "0123456789abcdef" for c in reference):
        raise ScheduleRefused(f"'{reference}' is not a schedule id (see `benchyard schedule list`)")
    with store.engine.connect() as connection:
        rows = connection.execute(
            select(schedules).where(schedules.c.id.like(reference + "%")).limit(2)
        ).all()
    if not rows:
        raise ScheduleRefused(f"no schedule matches '{reference}' (see `benchyard schedule list`)")
    if len(rows) > 1:
        raise ScheduleRefused(f"'{reference}' matches several schedules; give more of its id")
    return _schedule(rows[0])


def remove_schedule(store: Store, reference: str) -> Schedule:
    """Remove a schedule and its firings; runs it queued stay."""
    found = find_schedule(store, reference)
    with store.engine.begin() as connection:
        connection.execute(
            delete(schedule_firings).where(schedule_firings.c.schedule_id == found.id)
        )
        connection.execute(delete(schedules).where(schedules.c.id == found.id))
    return found


def firings(store: Store, schedule_id: str | None = None, limit: int = 20) -> list[Firing]:
    """The newest firings first (of one schedule, or of all)."""
    query = select(schedule_firings).order_by(
        schedule_firings.c.due_at.desc(), schedule_firings.c.id.desc()
    )
    if schedule_id is not None:
        query = query.where(schedule_firings.c.schedule_id == schedule_id)
    with store.engine.connect() as connection:
        rows = connection.execute(query.limit(limit)).all()
    return [_firing(row) for row in rows]


def firing_for_run(store: Store, run_id: str) -> Firing | None:
    with store.engine.connect() as connection:
        row = connection.execute(
            select(schedule_firings).where(schedule_firings.c.run_id == run_id)
        ).first()
    return None if row is None else _firing(row)


def previous_run(store: Store, firing: Firing) -> RunRecord | None:
    """The newest finished run of the same schedule queued before this firing's."""
    query = (
        select(runs)
        .join(schedule_firings, schedule_firings.c.run_id == runs.c.id)
        .where(
            schedule_firings.c.schedule_id == firing.schedule_id,
            schedule_firings.c.due_at < firing.due_at,
            runs.c.status == "finished",
        )
        .order_by(schedule_firings.c.due_at.desc())
        .limit(1)
    )
    from benchyard.store.store import run_from_row

    with store.engine.connect() as connection:
        row = connection.execute(query).first()
    return None if row is None else run_from_row(row)


def record_comparison(
    store: Store, firing_id: int, baseline_run_id: str | None, regression: bool | None, detail: str
) -> None:
    with store.engine.begin() as connection:
        connection.execute(
            update(schedule_firings)
            .where(schedule_firings.c.id == firing_id)
            .values(baseline_run_id=baseline_run_id, regression=regression, detail=detail[:2000])
        )


# ---- firing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claimed:
    """A firing this process claimed: queue its run (`enqueue`) or record it skipped."""

    firing_id: int
    schedule: Schedule
    due_at: datetime
    missed: int
    enqueue: bool


def due_count(store: Store, now: datetime) -> int:
    """How many schedules are due (a plain read: no lock taken when none is)."""
    with store.engine.connect() as connection:
        return len(
            connection.execute(select(schedules.c.id).where(schedules.c.next_due_at <= now)).all()
        )


def claim_due(store: Store, now: datetime) -> list[Claimed]:
    """Claim every schedule due at `now`, each in a transaction of its own; a schedule another
    worker holds or already moved on is left alone."""
    with store.engine.connect() as connection:
        due = connection.execute(
            select(schedules.c.id)
            .where(schedules.c.next_due_at <= now)
            .order_by(schedules.c.next_due_at)
        ).scalars()
        ids = list(due)
    claimed = []
    for schedule_id in ids:
        found = _transact(
            store, functools.partial(_claim, store=store, schedule_id=schedule_id, now=now)
        )
        if found is not None:
            claimed.append(found)
    return claimed


def _claim(
    connection: Connection, *, store: Store, schedule_id: str, now: datetime
) -> Claimed | None:
    query = select(schedules).where(schedules.c.id == schedule_id, schedules.c.next_due_at <= now)
    if store.engine.dialect.name != "sqlite":
        query = query.with_for_update(skip_locked=True)
    row = connection.execute(query).first()
    if row is None:
        return None  # another worker holds it, or handled it already
    from benchyard.automation.cron import Cron

    schedule = _schedule(row)
    cron = Cron.parse(schedule.cron)
    latest = cron.latest_at_or_before(now)
    if latest < schedule.next_due_at:  # the expression changed meaning (never, in practice)
        latest = schedule.next_due_at
    count = cron.count_between(schedule.next_due_at, latest)
    on_time = (now - latest).total_seconds() <= schedule.grace_sec
    run_it = on_time or schedule.missed == "once"
    missed = max(0, count - 1) if on_time else count
    connection.execute(
        update(schedules)
        .where(schedules.c.id == schedule.id)
        .values(next_due_at=cron.next_after(now))
    )
    detail = None
    if not run_it:
        detail = (
            f"{missed} firing(s) missed while no worker ran, the latest at {latest:%Y-%m-%d %H:%M} "
            "UTC; skipped (--missed skip)"
        )
    try:
        result = connection.execute(
            insert(schedule_firings).values(
                schedule_id=schedule.id,
                due_at=latest,
                handled_at=now,
                action="claimed" if run_it else "skipped",
                missed=missed,
                detail=detail,
            )
        )
    except IntegrityError:
        connection.rollback()
        return None  # this firing was handled already
    firing_id = int(result.inserted_primary_key[0])  # type: ignore[index]
    return Claimed(firing_id, schedule, latest, missed, run_it)


def fire_due(
    store: Store, now: datetime | None = None, log: Callable[[str], None] | None = None
) -> list[Firing]:
    """Claim the due schedules and queue a run for each firing that runs; returns the firings
    handled by this call."""
    at = now or datetime.now(UTC)
    say = log or (lambda message: None)
    if due_count(store, at) == 0:
        return []
    handled = []
    for claim in claim_due(store, at):
        if claim.enqueue:
            _enqueue(store, claim, say)
        else:
            say(f"schedule {claim.schedule.id[:8]}: skipped {claim.missed} missed firing(s)")
        handled.append(_firing_by_id(store, claim.firing_id))
    return handled


def _enqueue(store: Store, claim: Claimed, say: Callable[[str], None]) -> None:
    from benchyard.runner.api import enqueue

    schedule = claim.schedule
    try:
        benchmark, agent, settings, plan = plan_scheduled_run(
            schedule.benchmark, schedule.agent_name, schedule.agent_config, schedule.settings
        )
        run = enqueue(
            store,
            benchmark,
            agent,
            plan,
            settings,
            agent_repo=Path(schedule.agent_repo) if schedule.agent_repo else None,
        )
    except BenchyardError as error:
        reason = " ".join(str(error).split())[:2000]
        _set_firing(store, claim.firing_id, action="refused", detail=reason)
        say(f"schedule {schedule.id[:8]}: could not queue its run: {reason}")
        return
    _set_firing(store, claim.firing_id, action="enqueued", run_id=run.id)
    extra = f" ({claim.missed} missed firing(s) before it)" if claim.missed else ""
    say(f"schedule {schedule.id[:8]}: queued run {run.id[:8]} for {claim.due_at:%H:%M} UTC{extra}")


def _set_firing(store: Store, firing_id: int, **values: Any) -> None:
    with store.engine.begin() as connection:
        connection.execute(
            update(schedule_firings).where(schedule_firings.c.id == firing_id).values(**values)
        )


def _firing_by_id(store: Store, firing_id: int) -> Firing:
    with store.engine.connect() as connection:
        row = connection.execute(
            select(schedule_firings).where(schedule_firings.c.id == firing_id)
        ).one()
    return _firing(row)


def _transact(store: Store, body: Callable[[Connection], T]) -> T:
    """One transaction; on SQLite it holds the write lock from its start, on PostgreSQL a
    serialization failure or deadlock is tried again."""
    return EngineDatabase(store.engine).transact_connection(body)


def _schedule(row: Any) -> Schedule:
    values = row._asdict()
    for key in ("created_at", "next_due_at"):
        values[key] = moment(values[key])
    return Schedule(**values)


def _firing(row: Any) -> Firing:
    values = row._asdict()
    for key in ("due_at", "handled_at"):
        values[key] = moment(values[key])
    return Firing(**values)


def _who() -> str:
    from benchyard.runner.provenance import host_name

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{host_name()}"


def describe_next(schedule: Schedule, now: datetime | None = None) -> str:
    """'in 3 h 12 min' or 'due now'."""
    left = schedule.next_due_at - (now or datetime.now(UTC))
    if left <= timedelta(0):
        return "due now"
    minutes = int(left.total_seconds() // 60)
    if minutes < 60:
        return f"in {minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"in {hours} h {minutes} min" if hours < 48 else f"in {hours // 24} days"
