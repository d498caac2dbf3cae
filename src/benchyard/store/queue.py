"""The durable queue: one row per planned attempt, claimed by workers under a lease.

A worker claims queued attempts (`SELECT ... FOR UPDATE SKIP LOCKED` on PostgreSQL; on SQLite every
queue transaction takes the database's single write lock first, with `BEGIN IMMEDIATE`), extends
its lease with heartbeats, and marks each attempt done in the same transaction that writes its
final try, and only while it still holds the claim: an attempt is never recorded twice. Claims of
a worker that stopped heartbeating (or whose process is gone) are taken back by another worker:
re-queued, or the run failed when it asked for `--on-crash fail`; each time is recorded on the run.

States of a queued attempt: queued -> claimed -> done, or cancelled (run cancelled, interrupted
or failed). Runs: queued -> running -> finished (or interrupted, cancelled, failed). Transactions
that lock both lock the run rows first, then the queued attempts, so that they cannot deadlock.
"""

from __future__ import annotations

import itertools
import os
import socket
import uuid
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, and_, func, insert, or_, select, update
from sqlalchemy.exc import OperationalError

from benchyard.errors import BenchyardError
from benchyard.store import run_reads
from benchyard.store.lite import EngineReader
from benchyard.store.records import AttemptRecord, ResumeRecord, RunRecord
from benchyard.store.schema import attempt_queue, run_resumes, runs
from benchyard.store.store import Store, insert_attempts, insert_run

QUEUED, CLAIMED, DONE, CANCELLED = "queued", "claimed", "done", "cancelled"
OPEN_STATES = (QUEUED, CLAIMED)
ACTIVE_RUN_STATUSES = ("queued", "running")
TRANSACTION_TRIES = 5
ENQUEUE_CHUNK = 1000  # queue rows inserted per statement

q = attempt_queue
T = TypeVar("T")


class RunNotActive(BenchyardError):
    """A queue operation on a run that is no longer queued or running."""


@dataclass(frozen=True)
class WorkerIdentity:
    """Who holds a claim: `id` is unique per worker; `node` names the machine, its boot and its
    PID namespace, so that a worker can tell a dead worker of its own node by its PID."""

    id: str
    node: str
    pid: int

    @classmethod
    def here(cls) -> WorkerIdentity:
        host = socket.gethostname()
        pid = os.getpid()
        return cls(id=f"{host}:{pid}:{uuid.uuid4().hex[:6]}", node=_node(host), pid=pid)


def _node(host: str) -> str:
    parts = [host]
    try:
        parts.append(Path("/proc/sys/kernel/random/boot_id").read_text().strip()[:8])
        parts.append(os.readlink("/proc/self/ns/pid"))
    except OSError:
        pass
    return "/".join(parts)[:200]


@dataclass(frozen=True, order=True, slots=True)
class ClaimedAttempt:
    """A queued attempt this worker holds: `tries` were written before (a resumed retry goes on)."""

    id: int
    run_id: str
    scenario_id: str
    epoch: int
    tries: int


@dataclass(frozen=True)
class WriteOutcome:
    written: int  # tries recorded
    discarded: int  # tries of attempts this worker no longer held (cancelled, or taken back)
    ended_runs: list[str]  # runs this write completed (now finished)


@dataclass(frozen=True)
class StopOutcome:
    kept: int  # finished attempts kept
    dropped: int  # queued or running attempts cancelled


class Queue:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.engine = store.engine
        self.sqlite = store.engine.dialect.name == "sqlite"
        self._started: set[str] = set()  # runs this queue already saw running

    def _transact(self, body: Callable[[Connection], T]) -> T:
        """Run `body` in one transaction. On SQLite it holds the write lock from its first
        statement (the single-writer path); on PostgreSQL rows are locked where they are read, and
        a transaction chosen as a deadlock victim is run again."""
        for attempt in range(1, TRANSACTION_TRIES + 1):
            try:
                with self.engine.connect() as connection:
                    if self.sqlite:
                        connection.exec_driver_sql("BEGIN IMMEDIATE")
                    result = body(connection)
                    connection.commit()
                    return result
            except OperationalError as error:
                state = getattr(error.orig, "sqlstate", None) or ""
                if not state.startswith("40") or attempt == TRANSACTION_TRIES:
                    raise
        raise AssertionError("unreachable")

    def _later(self, seconds: float) -> Any:
        """A lease deadline on the database's clock (workers on several machines agree on it)."""
        if self.sqlite:
            return datetime.now(UTC) + timedelta(seconds=seconds)
        return func.now() + timedelta(seconds=seconds)

    def _now(self) -> Any:
        return self._later(0)

    def _locked(self, query: Any, *, skip_locked: bool = False) -> Any:
        return query if self.sqlite else query.with_for_update(skip_locked=skip_locked)

    def _lock_runs(self, connection: Connection, run_ids: Iterable[str]) -> dict[str, Any]:
        """Lock the run rows (in id order) and return their status and settings."""
        ids = sorted(set(run_ids))
        if not ids:
            return {}
        query = select(runs.c.id, runs.c.status, runs.c.settings).where(runs.c.id.in_(ids))
        rows = connection.execute(self._locked(query.order_by(runs.c.id))).all()
        return {row.id: row for row in rows}

    # ---- enqueueing ---------------------------------------------------------------------

    def enqueue(
        self,
        run: RunRecord,
        attempts: Iterable[tuple[str, int]],
        *,
        holder: WorkerIdentity | None = None,
        lease_sec: float = 60.0,
    ) -> None:
        """Record the run and queue its (scenario, epoch) attempts in plan order, in one
        transaction, a chunk at a time. With a `holder` (an inline run) they are claimed by it at
        once: it reads them back with `held`."""
        run.status = "running" if holder else "queued"
        holder_values: dict[str, Any] = {}
        if holder is not None:
            holder_values = {
                "worker": holder.id,
                "worker_node": holder.node,
                "worker_pid": holder.pid,
            }
        fixed = {
            "run_id": run.id,
            "state": CLAIMED if holder else QUEUED,
            "tries": 0,
            "claims": 0,
            **holder_values,
        }

        def body(connection: Connection) -> None:
            insert_run(connection, run)
            pairs = iter(attempts)
            while chunk := list(itertools.islice(pairs, ENQUEUE_CHUNK)):
                rows = [{"scenario_id": s, "epoch": epoch, **fixed} for s, epoch in chunk]
                connection.execute(insert(q), rows)
            if holder is not None:  # the database's clock (PostgreSQL) cannot go in a bulk insert
                connection.execute(
                    update(q)
                    .where(q.c.run_id == run.id)
                    .values(lease_expires_at=self._later(lease_sec))
                )

        self._transact(body)

    # ---- claiming and holding -----------------------------------------------------------

    def claim(
        self,
        worker: WorkerIdentity,
        limit: int,
        lease_sec: float,
        *,
        run_id: str | None = None,
        skip_runs: Iterable[str] = (),
    ) -> list[ClaimedAttempt]:
        """Claim up to `limit` queued attempts, oldest first; their runs become running."""
        candidates = select(q.c.id).where(q.c.state == QUEUED)
        if run_id is not None:
            candidates = candidates.where(q.c.run_id == run_id)
        skipped = list(skip_runs)
        if skipped:
            candidates = candidates.where(q.c.run_id.not_in(skipped))
        candidates = self._locked(candidates.order_by(q.c.id).limit(limit), skip_locked=True)
        statement = (
            update(q)
            .where(q.c.id.in_(candidates.scalar_subquery()))
            .values(
                state=CLAIMED,
                worker=worker.id,
                worker_node=worker.node,
                worker_pid=worker.pid,
                lease_expires_at=self._later(lease_sec),
            )
            .returning(q.c.id, q.c.run_id, q.c.scenario_id, q.c.epoch, q.c.tries)
        )
        claimed = sorted(
            self._transact(lambda c: [ClaimedAttempt(*row) for row in c.execute(statement)])
        )
        started = {item.run_id for item in claimed} - self._started
        if started:  # its own transaction: it locks runs, after the claim's queued attempts
            self._transact(
                lambda c: c.execute(
                    update(runs)
                    .where(runs.c.id.in_(started), runs.c.status == "queued")
                    .values(status="running", status_reason=None)
                )
            )
            self._started |= started
        return claimed

    def held(
        self, worker: WorkerIdentity, run_id: str, *, after: int = 0, limit: int = 1000
    ) -> list[ClaimedAttempt]:
        """Attempts of `run_id` that `worker` holds, in plan order, from the one after `after`:
        an inline run reads what it enqueued a chunk at a time."""
        query = (
            select(q.c.id, q.c.run_id, q.c.scenario_id, q.c.epoch, q.c.tries)
            .where(q.c.run_id == run_id, q.c.worker == worker.id, q.c.state == CLAIMED)
            .where(q.c.id > after)
            .order_by(q.c.id)
            .limit(limit)
        )
        with self.engine.connect() as connection:
            return [ClaimedAttempt(*row) for row in connection.execute(query)]

    def heartbeat(
        self, worker: WorkerIdentity, lease_sec: float, among: Collection[int] | None = None
    ) -> set[int]:
        """Extend the lease of everything `worker` holds; returns the ids it still holds (of
        `among` only, when given: a worker holding 100,000 attempts asks about those it runs)."""
        statement = (
            update(q)
            .where(q.c.worker == worker.id, q.c.state == CLAIMED)
            .values(lease_expires_at=self._later(lease_sec))
            .returning(q.c.id)
        )

        def body(connection: Connection) -> set[int]:
            ids = connection.execute(statement).scalars()
            return set(ids) if among is None else {i for i in ids if i in among}

        return self._transact(body)

    def mark_stuck(self, worker: WorkerIdentity, ids: Collection[int]) -> int:
        """Mark attempts `worker` holds as stuck (its watchdog cancelled them and they still run):
        shown as such, and free for another worker to take back. Returns how many were new."""
        if not ids:
            return 0
        statement = (
            update(q)
            .where(q.c.id.in_(list(ids)), q.c.worker == worker.id, q.c.state == CLAIMED)
            .where(q.c.stuck_since.is_(None))
            .values(stuck_since=self._now())
        )
        return self._transact(lambda c: c.execute(statement).rowcount)

    def starting(self, worker: WorkerIdentity, attempt_id: int) -> int | None:
        """Count that `worker` starts running a queued attempt it holds; returns how many times a
        worker started it before (each ended with that worker lost, or stopped mid-attempt), or
        None when `worker` no longer holds it."""
        statement = (
            update(q)
            .where(q.c.id == attempt_id, q.c.worker == worker.id, q.c.state == CLAIMED)
            .values(claims=q.c.claims + 1)
            .returning(q.c.claims)
        )
        started = self._transact(lambda c: c.execute(statement).scalar_one_or_none())
        return None if started is None else int(started) - 1

    def release(self, worker: WorkerIdentity, interrupted: Collection[int] = ()) -> int:
        """Put back everything `worker` holds (a worker stopping cleanly); returns how many. The
        `interrupted` attempts (it stopped them mid-run) do not count as started by it."""

        def body(connection: Connection) -> int:
            if interrupted:
                connection.execute(
                    update(q)
                    .where(q.c.id.in_(list(interrupted)), q.c.worker == worker.id)
                    .where(q.c.state == CLAIMED, q.c.claims > 0)
                    .values(claims=q.c.claims - 1)
                )
            statement = (
                update(q)
                .where(q.c.worker == worker.id, q.c.state == CLAIMED)
                .values(**_unclaimed(QUEUED))
            )
            return int(connection.execute(statement).rowcount)

        return self._transact(body)

    # ---- writing results ----------------------------------------------------------------

    def write(
        self, worker: WorkerIdentity, tries: Sequence[tuple[AttemptRecord, int]]
    ) -> WriteOutcome:
        """Record finished tries (record, queued attempt id) that `worker` still holds, in one
        transaction; a final (not superseded) try marks its attempt done, and a run whose last
        attempt it was is marked finished. Tries of attempts no longer held are discarded."""
        if not tries:
            return WriteOutcome(0, 0, [])
        return self._transact(lambda connection: self._write(connection, worker, tries))

    def _write(
        self,
        connection: Connection,
        worker: WorkerIdentity,
        tries: Sequence[tuple[AttemptRecord, int]],
    ) -> WriteOutcome:
        self._lock_runs(connection, (record.run_id for record, _ in tries))
        held_query = select(q.c.id).where(
            q.c.id.in_({item for _, item in tries}), q.c.worker == worker.id, q.c.state == CLAIMED
        )
        held = set(connection.execute(self._locked(held_query)).scalars())
        kept = [(record, item) for record, item in tries if item in held]
        insert_attempts(connection, [record for record, _ in kept])
        progress: dict[int, tuple[int, bool]] = {}
        for record, item in kept:
            count, done = progress.get(item, (0, False))
            progress[item] = (max(count, record.try_number), done or not record.superseded)
        alike: dict[tuple[int, bool], list[int]] = defaultdict(list)
        for item, count_and_done in progress.items():
            alike[count_and_done].append(item)
        for (count, done), items in alike.items():  # usually one statement: all done, try 1
            connection.execute(
                update(q)
                .where(q.c.id.in_(items))
                .values(state=DONE if done else CLAIMED, tries=count)
            )
        completed = sorted({record.run_id for record, _ in kept if not record.superseded})
        ended = [run_id for run_id in completed if self._finish_if_done(connection, run_id)]
        return WriteOutcome(len(kept), len(tries) - len(kept), ended)

    def _finish_if_done(self, connection: Connection, run_id: str) -> bool:
        """Mark the (locked) run finished when none of its attempts is queued or claimed."""
        if self._count(connection, run_id, OPEN_STATES):
            return False
        ended = connection.execute(
            update(runs)
            .where(runs.c.id == run_id, runs.c.status.in_(ACTIVE_RUN_STATUSES))
            .values(status="finished", finished_at=datetime.now(UTC))
        )
        return bool(ended.rowcount)

    def _count(self, connection: Connection, run_id: str, states: Sequence[str]) -> int:
        query = select(func.count()).select_from(q).where(q.c.run_id == run_id)
        return int(connection.execute(query.where(q.c.state.in_(states))).scalar_one())

    # ---- stopping runs ------------------------------------------------------------------

    def stop_run(self, run_id: str, status: str, reason: str | None = None) -> StopOutcome:
        """End a queued or running run as `status` (cancelled, interrupted, failed): what finished
        is kept, what is queued or running is cancelled (workers notice at their next heartbeat)."""

        def body(connection: Connection) -> StopOutcome:
            run = self._lock_runs(connection, [run_id]).get(run_id)
            if run is None or run.status not in ACTIVE_RUN_STATUSES:
                current = "gone" if run is None else run.status
                raise RunNotActive(f"run {run_id[:8]} is already {current}; nothing to stop")
            return self._stop(connection, run_id, status, reason)

        return self._transact(body)

    def _stop(
        self, connection: Connection, run_id: str, status: str, reason: str | None
    ) -> StopOutcome:
        dropped = connection.execute(
            update(q)
            .where(q.c.run_id == run_id, q.c.state.in_(OPEN_STATES))
            .values(**_unclaimed(CANCELLED))
        ).rowcount
        connection.execute(
            update(runs)
            .where(runs.c.id == run_id)
            .values(status=status, status_reason=reason, finished_at=datetime.now(UTC))
        )
        return StopOutcome(self._count(connection, run_id, (DONE,)), dropped)

    def pause_run(self, run_id: str, worker: WorkerIdentity, why: str) -> int:
        """Put the attempts `worker` holds of a running run back in the queue and mark the run
        queued with the reason (`why` a budget or a pilot stopped it, and how many attempts
        went back): `benchyard worker` resumes it. Returns how many attempts went back (0:
        nothing was held, the run is left as it is)."""

        def body(connection: Connection) -> int:
            run = self._lock_runs(connection, [run_id]).get(run_id)
            if run is None or run.status not in ACTIVE_RUN_STATUSES:
                current = "gone" if run is None else run.status
                raise RunNotActive(f"run {run_id[:8]} is already {current}; nothing to pause")
            moved = connection.execute(
                update(q)
                .where(q.c.run_id == run_id, q.c.worker == worker.id, q.c.state == CLAIMED)
                .values(**_unclaimed(QUEUED))
            ).rowcount
            if moved:
                connection.execute(
                    update(runs)
                    .where(runs.c.id == run_id)
                    .values(status="queued", status_reason=_paused_reason(why, moved))
                )
            return int(moved)

        return self._transact(body)

    # ---- taking back the claims of lost workers -----------------------------------------

    def local_holders(self, worker: WorkerIdentity) -> set[int]:
        """PIDs of the other workers on this node that hold claims."""
        query = (
            select(q.c.worker_pid)
            .where(q.c.state == CLAIMED, q.c.worker_node == worker.node, q.c.worker != worker.id)
            .distinct()
        )
        with self.engine.connect() as connection:
            return {pid for pid in connection.execute(query).scalars() if pid is not None}

    def reclaim(self, worker: WorkerIdentity, dead_pids: Iterable[int] = ()) -> list[ResumeRecord]:
        """Take back the claims whose lease expired, and those of this node's workers whose
        process is gone (`dead_pids`): re-queued, or the run failed when it asked for that."""
        dead = sorted(set(dead_pids))
        stuck = and_(q.c.stuck_since.is_not(None), q.c.worker != worker.id)
        lost = or_(q.c.lease_expires_at < self._now(), stuck)
        if dead:
            gone = and_(q.c.worker_node == worker.node, q.c.worker_pid.in_(dead))
            lost = or_(lost, and_(gone, q.c.worker != worker.id))
        stale = select(
            q.c.id, q.c.run_id, q.c.worker, q.c.worker_pid, q.c.worker_node, q.c.stuck_since
        ).where(q.c.state == CLAIMED, lost)

        def body(connection: Connection) -> list[ResumeRecord]:
            run_ids = {row.run_id for row in connection.execute(stale)}
            locked_runs = self._lock_runs(connection, run_ids)
            groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
            for row in connection.execute(self._locked(stale, skip_locked=True)):
                if row.run_id in locked_runs:
                    groups[(row.run_id, row.worker)].append(row)
            resumes = []
            for (run_id, lost_worker), rows in sorted(groups.items()):
                cause = _lost_cause(rows, worker, dead)
                resume = self._take_back(
                    connection, worker, locked_runs[run_id], lost_worker, cause, rows
                )
                if resume is not None:
                    resumes.append(resume)
            return resumes

        return self._transact(body)

    def _take_back(
        self,
        connection: Connection,
        worker: WorkerIdentity,
        run: Any,
        lost_worker: str,
        cause: str,
        rows: list[Any],
    ) -> ResumeRecord | None:
        ids = [row.id for row in rows]
        status = connection.execute(select(runs.c.status).where(runs.c.id == run.id)).scalar_one()
        if status not in ACTIVE_RUN_STATUSES:  # ended already (failed for an earlier lost worker)
            connection.execute(update(q).where(q.c.id.in_(ids)).values(**_unclaimed(CANCELLED)))
            return None
        if (run.settings or {}).get("on_crash") == "fail":
            reason = f"worker {lost_worker} was lost ({cause}); --on-crash fail"
            stopped = self._stop(connection, run.id, "failed", reason)
            action, kept, moved = "failed", stopped.kept, stopped.dropped
        else:
            connection.execute(update(q).where(q.c.id.in_(ids)).values(**_unclaimed(QUEUED)))
            action, kept, moved = "requeued", self._count(connection, run.id, (DONE,)), len(ids)
        resume = ResumeRecord(
            run_id=run.id,
            at=datetime.now(UTC),
            action=action,
            lost_worker=lost_worker,
            cause=cause,
            by_worker=worker.id,
            kept=kept,
            requeued=moved,
        )
        connection.execute(insert(run_resumes).values(**asdict(resume)))
        return resume

    def lost_elsewhere(
        self, worker: WorkerIdentity, ids: Iterable[int], lost: str, cause: str
    ) -> tuple[list[ResumeRecord], set[int]]:
        """Record that attempts `worker` holds lost the place they ran on (a Ray node that died
        mid-attempt, `lost` naming it): one resume per run, as for a lost worker. The worker keeps
        their claims and runs them again elsewhere; a run with `--on-crash fail` fails instead.
        Returns the resumes and the attempts to run again (still held, their run still on)."""
        held = select(q.c.id, q.c.run_id).where(
            q.c.id.in_(sorted(set(ids))), q.c.worker == worker.id, q.c.state == CLAIMED
        )

        def body(connection: Connection) -> tuple[list[ResumeRecord], set[int]]:
            run_ids = {row.run_id for row in connection.execute(held)}
            locked_runs = self._lock_runs(connection, run_ids)
            groups: dict[str, list[Any]] = defaultdict(list)
            for row in connection.execute(self._locked(held)):
                if row.run_id in locked_runs:
                    groups[row.run_id].append(row)
            resumes: list[ResumeRecord] = []
            again: set[int] = set()
            for run_id, rows in sorted(groups.items()):
                run = locked_runs[run_id]
                if (run.settings or {}).get("on_crash") == "fail":
                    resume = self._take_back(connection, worker, run, lost, cause, rows)
                    resumes += [resume] if resume is not None else []
                    continue
                resume = ResumeRecord(
                    run_id=run_id,
                    at=datetime.now(UTC),
                    action="requeued",
                    lost_worker=lost,
                    cause=cause,
                    by_worker=worker.id,
                    kept=self._count(connection, run_id, (DONE,)),
                    requeued=len(rows),
                )
                connection.execute(insert(run_resumes).values(**asdict(resume)))
                resumes.append(resume)
                again |= {row.id for row in rows}
            return resumes, again

        return self._transact(body)

    # ---- reading ------------------------------------------------------------------------

    def scenario_ids(self, run_id: str) -> set[str]:
        """The scenarios a run has attempts of in the queue (what its filters, limit or rerun
        selected)."""
        query = select(attempt_queue.c.scenario_id).where(attempt_queue.c.run_id == run_id)
        with self.engine.connect() as connection:
            return {str(value) for value in connection.execute(query.distinct()).scalars()}

    def resumes(self, run_id: str) -> list[ResumeRecord]:
        return run_reads.run_resumes(EngineReader(self.engine), run_id)


def _lost_cause(rows: Sequence[Any], worker: WorkerIdentity, dead: Collection[int]) -> str:
    """Why a worker's claims were taken back (the first of its rows speaks for the others)."""
    if rows[0].worker_node == worker.node and rows[0].worker_pid in dead:
        return "its process is gone"
    if rows[0].stuck_since is not None:
        return "its watchdog found the attempt stuck"
    return "its lease expired"


def _paused_reason(why: str, left: int) -> str:
    return f"{why}; {left} attempts left queued (`benchyard worker` resumes the run)"


def _unclaimed(state: str) -> dict[str, Any]:
    return {
        "state": state,
        "worker": None,
        "worker_node": None,
        "worker_pid": None,
        "lease_expires_at": None,
        "node": None,
        "stuck_since": None,
    }
