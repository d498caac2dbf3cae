"""`benchyard gc`: dropping the bulky evidence of old runs on request. A collected run keeps its
row, its attempts with their verdicts, scores, causes, turns, tokens and costs, their check
results and their answers (rescore and pairwise read them); it loses each try's stdout, stderr,
trajectory and patch. Runs still queued or running are never collected."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, bindparam, func, or_, select, update

from benchyard.store import outputs as outputs_codec
from benchyard.store.run_list import moment
from benchyard.store.schema import attempts, runs
from benchyard.store.store import Store, without_nul

ACTIVE_STATUSES = ("queued", "running")
_EVIDENCE = (attempts.c.outputs, attempts.c.trajectory, attempts.c.patch)
_TEXTS = (attempts.c.stdout, attempts.c.stderr)
_HAS_EVIDENCE = or_(*(column.is_not(None) for column in (*_EVIDENCE, *_TEXTS)))


@dataclass(frozen=True)
class GcPolicy:
    """Which runs lose their evidence: those started more than `older_than_days` ago and not
    among the newest `keep_last` runs (each condition only when given; one at least)."""

    older_than_days: float | None = None
    keep_last: int | None = None


@dataclass(frozen=True)
class GcOutcome:
    runs: list[str]  # the runs collected (or, with a dry run, that would be)
    attempts: int  # their tries that still held evidence
    stored_bytes: int  # the evidence's stored size, compressed
    vacuumed: bool  # a SQLite store was compacted to give the space back


def collect(store: Store, policy: GcPolicy, *, dry_run: bool = False) -> GcOutcome:
    """Drop the evidence of the runs `policy` chooses; with `dry_run`, only say what it would."""
    chosen = _chosen_runs(store, policy)
    with store.engine.connect() as connection:
        held = select(
            func.count(),
            *(func.sum(func.coalesce(func.length(c), 0)) for c in (*_EVIDENCE, *_TEXTS)),
        )
        counted = connection.execute(held.where(attempts.c.run_id.in_(chosen), _HAS_EVIDENCE)).one()
    outcome = GcOutcome(chosen, int(counted[0]), sum(int(size or 0) for size in counted[1:]), False)
    if dry_run or not outcome.attempts:
        return outcome
    for run_id in chosen:
        with store.engine.begin() as connection:
            _drop_evidence(connection, run_id)
    return GcOutcome(chosen, outcome.attempts, outcome.stored_bytes, _vacuum(store))


def _chosen_runs(store: Store, policy: GcPolicy) -> list[str]:
    if policy.older_than_days is None and policy.keep_last is None:
        raise ValueError("a gc policy needs older_than_days or keep_last")
    query = select(runs.c.id, runs.c.started_at, runs.c.status).order_by(
        runs.c.started_at.desc(), runs.c.id.desc()
    )
    with store.engine.connect() as connection:
        rows = connection.execute(query).all()
    cutoff = None
    if policy.older_than_days is not None:
        cutoff = datetime.now(UTC) - timedelta(days=policy.older_than_days)
    return [
        row.id
        for position, row in enumerate(rows)
        if row.status not in ACTIVE_STATUSES
        and (policy.keep_last is None or position >= policy.keep_last)
        and (cutoff is None or _started(row) < cutoff)
    ]


def _started(row: Any) -> datetime:
    started = moment(row.started_at)
    assert started is not None  # runs.started_at is NOT NULL
    return started


def _drop_evidence(connection: Connection, run_id: str) -> None:
    """The tries of `run_id` without stdout, stderr, trajectory and patch; an answer kept in the
    `outputs` blob moves to the `answer` column, so that no blob is left behind."""
    rows = connection.execute(
        select(attempts.c.id, attempts.c.outputs, attempts.c.answer).where(
            attempts.c.run_id == run_id, _HAS_EVIDENCE
        )
    ).all()
    if not rows:
        return
    statement = (
        update(attempts)
        .where(attempts.c.id == bindparam("attempt_id"))
        .values(
            answer=bindparam("kept_answer"),
            outputs=None,
            trajectory=None,
            patch=None,
            stdout=None,
            stderr=None,
        )
    )
    connection.execute(
        statement,
        [{"attempt_id": row.id, "kept_answer": _answer(row.outputs, row.answer)} for row in rows],
    )


def _answer(blob: bytes | None, text: str | None) -> str | None:
    if blob is None:
        return text
    answer = outputs_codec.decode(blob).answer
    return without_nul(answer) if answer is not None else None


def _vacuum(store: Store) -> bool:
    """Give a SQLite file's freed pages back to the file system (PostgreSQL's autovacuum reuses
    them in place)."""
    if store.engine.dialect.name != "sqlite":
        return False
    with store.engine.connect() as connection:
        connection.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("VACUUM")
    return True
