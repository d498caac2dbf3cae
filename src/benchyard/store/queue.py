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
from collections.abc import Collection, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchyard.errors import BenchyardError
from benchyard.store import run_reads
from benchyard.store.database import Transaction
from benchyard.store.lite import in_list, json_value
from benchyard.store.records import AttemptRecord, ResumeRecord, RunRecord
from benchyard.store.store import Store, insert_attempts, insert_run, insert_values

if TYPE_CHECKING:
    from sqlalchemy import Engine

QUEUED, CLAIMED, DONE, CANCELLED = "queued", "claimed", "done", "cancelled"
OPEN_STATES = (QUEUED, CLAIMED)
ACTIVE_RUN_STATUSES = ("queued", "running")
ENQUEUE_CHUNK = 1000  # queue rows inserted per statement
# A claim given up: the attempt's new state is :unclaimed_state.
UNCLAIMED = (
    "state = :unclaimed_state, worker = NULL, worker_node = NULL, worker_pid = NULL, "
    "lease_expires_at = NULL, node = NULL, stuck_since = NULL"
)
_QUEUE_ROW = ("run_id", "scenario_id", "epoch", "state", "tries", "claims")
_HOLDER = ("worker", "worker_node", "worker_pid")
_CLAIMED_COLUMNS = "id, run_id, scenario_id, epoch, tries"
_STALE_COLUMNS = "id, run_id, worker, worker_pid, worker_node, stuck_since"


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


@dataclass(frozen=True)
class _LockedRun:
    id: str
    status: str
    settings: dict[str, Any]


@dataclass(frozen=True)
class _Claim:
    """A claim read back to be taken back: a row of _STALE_COLUMNS."""

    id: int
    run_id: str
    worker: str
    worker_pid: int | None
    worker_node: str | None
    stuck_since: Any


class Queue:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.database = store.database
        self.sqlite = self.database.dialect == "sqlite"
        self._started: set[str] = set()  # runs this queue already saw running

    @property
    def engine(self) -> Engine:
        return self.store.engine

    def _later(self, seconds: float, params: dict[str, Any], name: str = "lease") -> str:
        """SQL for a moment `seconds` from now on the database's clock (workers on several
        machines agree on lease deadlines), its value put in `params`."""
        if self.sqlite:
            params[name] = datetime.now(UTC) + timedelta(seconds=seconds)
            return f":{name}"
        params[name] = float(seconds)
        return f"now() + make_interval(secs => :{name})"

    def _locked(self, sql: str, *, skip_locked: bool = False) -> str:
        if self.sqlite:
            return sql
        return sql + (" FOR UPDATE SKIP LOCKED" if skip_locked else " FOR UPDATE")

    def _lock_runs(self, tx: Transaction, run_ids: Iterable[str]) -> dict[str, _LockedRun]:
        """Lock the run rows (in id order) and return their status and settings."""
        ids = sorted(set(run_ids))
        if not ids:
            return {}
        params: dict[str, Any] = {}
        sql = f"SELECT id, status, settings FROM runs WHERE id IN ({in_list('run', ids, params)})"
        rows = tx.execute(self._locked(sql + " ORDER BY id"), params).rows
        return {row[0]: _LockedRun(row[0], row[1], json_value(row[2]) or {}) for row in rows}

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
        fixed = {
            "run_id": run.id,
            "state": CLAIMED if holder else QUEUED,
            "tries": 0,
            "claims": 0,
            "worker": holder.id if holder else None,
            "worker_node": holder.node if holder else None,
            "worker_pid": holder.pid if holder else None,
        }
        statement = insert_values("attempt_queue", (*_QUEUE_ROW, *_HOLDER))

        def body(tx: Transaction) -> None:
            insert_run(tx, run)
            pairs = iter(attempts)
            while chunk := list(itertools.islice(pairs, ENQUEUE_CHUNK)):
                tx.execute_many(
                    statement, [{**fixed, "scenario_id": s, "epoch": epoch} for s, epoch in chunk]
                )
            if holder is not None:  # the database's clock (PostgreSQL) cannot go in a bulk insert
                params: dict[str, Any] = {"run": run.id}
                later = self._later(lease_sec, params)
                tx.execute(
                    f"UPDATE attempt_queue SET lease_expires_at = {later} WHERE run_id = :run",
                    params,
                )

        self.database.transact(body)

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
        params: dict[str, Any] = {**_holder(worker), "queued": QUEUED, "limit": limit}
        candidates = "SELECT id FROM attempt_queue WHERE state = :queued"
        if run_id is not None:
            candidates += " AND run_id = :run"
            params["run"] = run_id
        skipped = list(skip_runs)
        if skipped:
            candidates += f" AND run_id NOT IN ({in_list('skip', skipped, params)})"
        candidates = self._locked(f"{candidates} ORDER BY id LIMIT :limit", skip_locked=True)
        later = self._later(lease_sec, params)
        statement = (
            f"UPDATE attempt_queue SET state = :claimed, worker = :worker, "
            f"worker_node = :worker_node, worker_pid = :worker_pid, lease_expires_at = {later} "
            f"WHERE id IN ({candidates}) RETURNING {_CLAIMED_COLUMNS}"
        )
        params["claimed"] = CLAIMED
        claimed = sorted(
            self.database.transact(
                lambda tx: [ClaimedAttempt(*row) for row in tx.execute(statement, params).rows]
            )
        )
        started = {item.run_id for item in claimed} - self._started
        if started:  # its own transaction: it locks runs, after the claim's queued attempts
            running: dict[str, Any] = {"queued": "queued", "running": "running"}
            ids = in_list("run", sorted(started), running)
            self.database.transact(
                lambda tx: tx.execute(
                    "UPDATE runs SET status = :running, status_reason = NULL "
                    f"WHERE id IN ({ids}) AND status = :queued",
                    running,
                )
            )
            self._started |= started
        return claimed

    def held(
        self, worker: WorkerIdentity, run_id: str, *, after: int = 0, limit: int = 1000
    ) -> list[ClaimedAttempt]:
        """Attempts of `run_id` that `worker` holds, in plan order, from the one after `after`:
        an inline run reads what it enqueued a chunk at a time."""
        sql = (
            f"SELECT {_CLAIMED_COLUMNS} FROM attempt_queue WHERE run_id = :run "
            "AND worker = :worker AND state = :claimed AND id > :after ORDER BY id LIMIT :limit"
        )
        params = {"run": run_id, "worker": worker.id, "claimed": CLAIMED, "after": after}
        rows = self.database.rows(sql, {**params, "limit": limit})
        return [ClaimedAttempt(*row) for row in rows]

    def heartbeat(
        self, worker: WorkerIdentity, lease_sec: float, among: Collection[int] | None = None
    ) -> set[int]:
        """Extend the lease of everything `worker` holds; returns the ids it still holds (of
        `among` only, when given: a worker holding 100,000 attempts asks about those it runs)."""
        params: dict[str, Any] = {"worker": worker.id, "claimed": CLAIMED}
        later = self._later(lease_sec, params)
        statement = (
            f"UPDATE attempt_queue SET lease_expires_at = {later} "
            "WHERE worker = :worker AND state = :claimed RETURNING id"
        )

        def body(tx: Transaction) -> set[int]:
            ids = (row[0] for row in tx.execute(statement, params).rows)
            return set(ids) if among is None else {i for i in ids if i in among}

        return self.database.transact(body)

    def mark_stuck(self, worker: WorkerIdentity, ids: Collection[int]) -> int:
        """Mark attempts `worker` holds as stuck (its watchdog cancelled them and they still run):
        shown as such, and free for another worker to take back. Returns how many were new."""
        if not ids:
            return 0
        params: dict[str, Any] = {"worker": worker.id, "claimed": CLAIMED}
        now = self._later(0, params, "now")
        statement = (
            f"UPDATE attempt_queue SET stuck_since = {now} "
            f"WHERE id IN ({in_list('item', list(ids), params)}) AND worker = :worker "
            "AND state = :claimed AND stuck_since IS NULL"
        )
        return self.database.transact(lambda tx: tx.execute(statement, params).rowcount)

    def starting(self, worker: WorkerIdentity, attempt_id: int) -> int | None:
        """Count that `worker` starts running a queued attempt it holds; returns how many times a
        worker started it before (each ended with that worker lost, or stopped mid-attempt), or
        None when `worker` no longer holds it."""
        statement = (
            "UPDATE attempt_queue SET claims = claims + 1 "
            "WHERE id = :item AND worker = :worker AND state = :claimed RETURNING claims"
        )
        params = {"item": attempt_id, "worker": worker.id, "claimed": CLAIMED}
        rows = self.database.transact(lambda tx: tx.execute(statement, params).rows)
        return int(rows[0][0]) - 1 if rows else None

    def release(self, worker: WorkerIdentity, interrupted: Collection[int] = ()) -> int:
        """Put back everything `worker` holds (a worker stopping cleanly); returns how many. The
        `interrupted` attempts (it stopped them mid-run) do not count as started by it."""
        params: dict[str, Any] = {"worker": worker.id, "claimed": CLAIMED}

        def body(tx: Transaction) -> int:
            if interrupted:
                ids = in_list("item", list(interrupted), params)
                tx.execute(
                    "UPDATE attempt_queue SET claims = claims - 1 WHERE "
                    f"id IN ({ids}) AND worker = :worker AND state = :claimed AND claims > 0",
                    params,
                )
            return tx.execute(
                f"UPDATE attempt_queue SET {UNCLAIMED} WHERE worker = :worker AND state = :claimed",
                {**params, "unclaimed_state": QUEUED},
            ).rowcount

        return self.database.transact(body)

    # ---- writing results ----------------------------------------------------------------

    def write(
        self, worker: WorkerIdentity, tries: Sequence[tuple[AttemptRecord, int]]
    ) -> WriteOutcome:
        """Record finished tries (record, queued attempt id) that `worker` still holds, in one
        transaction; a final (not superseded) try marks its attempt done, and a run whose last
        attempt it was is marked finished. Tries of attempts no longer held are discarded."""
        if not tries:
            return WriteOutcome(0, 0, [])
        return self.database.transact(lambda tx: self._write(tx, worker, tries))

    def _write(
        self,
        tx: Transaction,
        worker: WorkerIdentity,
        tries: Sequence[tuple[AttemptRecord, int]],
    ) -> WriteOutcome:
        self._lock_runs(tx, (record.run_id for record, _ in tries))
        params: dict[str, Any] = {"worker": worker.id, "claimed": CLAIMED}
        items = in_list("item", sorted({item for _, item in tries}), params)
        held_sql = (
            f"SELECT id FROM attempt_queue WHERE id IN ({items}) "
            "AND worker = :worker AND state = :claimed"
        )
        held = {row[0] for row in tx.execute(self._locked(held_sql), params).rows}
        kept = [(record, item) for record, item in tries if item in held]
        insert_attempts(tx, [record for record, _ in kept])
        progress: dict[int, tuple[int, bool]] = {}
        for record, item in kept:
            count, done = progress.get(item, (0, False))
            progress[item] = (max(count, record.try_number), done or not record.superseded)
        alike: dict[tuple[int, bool], list[int]] = defaultdict(list)
        for item, count_and_done in progress.items():
            alike[count_and_done].append(item)
        for (count, done), group in alike.items():  # usually one statement: all done, try 1
            values: dict[str, Any] = {"state": DONE if done else CLAIMED, "tries": count}
            tx.execute(
                "UPDATE attempt_queue SET state = :state, tries = :tries "
                f"WHERE id IN ({in_list('item', group, values)})",
                values,
            )
        completed = sorted({record.run_id for record, _ in kept if not record.superseded})
        ended = [run_id for run_id in completed if self._finish_if_done(tx, run_id)]
        return WriteOutcome(len(kept), len(tries) - len(kept), ended)

    def _finish_if_done(self, tx: Transaction, run_id: str) -> bool:
        """Mark the (locked) run finished when none of its attempts is queued or claimed."""
        if self._count(tx, run_id, OPEN_STATES):
            return False
        params: dict[str, Any] = {"run": run_id, "finished": datetime.now(UTC)}
        active = in_list("active", ACTIVE_RUN_STATUSES, params)
        ended = tx.execute(
            "UPDATE runs SET status = 'finished', finished_at = :finished "
            f"WHERE id = :run AND status IN ({active})",
            params,
        )
        return bool(ended.rowcount)

    def _count(self, tx: Transaction, run_id: str, states: Sequence[str]) -> int:
        params: dict[str, Any] = {"run": run_id}
        sql = (
            "SELECT count(*) FROM attempt_queue "
            f"WHERE run_id = :run AND state IN ({in_list('state', states, params)})"
        )
        return int(tx.execute(sql, params).rows[0][0])

    # ---- stopping runs ------------------------------------------------------------------

    def stop_run(self, run_id: str, status: str, reason: str | None = None) -> StopOutcome:
        """End a queued or running run as `status` (cancelled, interrupted, failed): what finished
        is kept, what is queued or running is cancelled (workers notice at their next heartbeat)."""

        def body(tx: Transaction) -> StopOutcome:
            run = self._lock_runs(tx, [run_id]).get(run_id)
            if run is None or run.status not in ACTIVE_RUN_STATUSES:
                current = "gone" if run is None else run.status
                raise RunNotActive(f"run {run_id[:8]} is already {current}; nothing to stop")
            return self._stop(tx, run_id, status, reason)

        return self.database.transact(body)

    def _stop(self, tx: Transaction, run_id: str, status: str, reason: str | None) -> StopOutcome:
        params: dict[str, Any] = {"run": run_id, "unclaimed_state": CANCELLED}
        dropped = tx.execute(
            f"UPDATE attempt_queue SET {UNCLAIMED} "
            f"WHERE run_id = :run AND state IN ({in_list('state', OPEN_STATES, params)})",
            params,
        ).rowcount
        tx.execute(
            "UPDATE runs SET status = :status, status_reason = :reason, finished_at = :finished "
            "WHERE id = :run",
            {"run": run_id, "status": status, "reason": reason, "finished": datetime.now(UTC)},
        )
        return StopOutcome(self._count(tx, run_id, (DONE,)), dropped)

    def pause_run(self, run_id: str, worker: WorkerIdentity, why: str) -> int:
        """Put the attempts `worker` holds of a running run back in the queue and mark the run
        queued with the reason (`why` a budget or a pilot stopped it, and how many attempts
        went back): `benchyard worker` resumes it. Returns how many attempts went back (0:
        nothing was held, the run is left as it is)."""

        def body(tx: Transaction) -> int:
            run = self._lock_runs(tx, [run_id]).get(run_id)
            if run is None or run.status not in ACTIVE_RUN_STATUSES:
                current = "gone" if run is None else run.status
                raise RunNotActive(f"run {run_id[:8]} is already {current}; nothing to pause")
            moved = tx.execute(
                f"UPDATE attempt_queue SET {UNCLAIMED} "
                "WHERE run_id = :run AND worker = :worker AND state = :claimed",
                {"run": run_id, "worker": worker.id, "claimed": CLAIMED, "unclaimed_state": QUEUED},
            ).rowcount
            if moved:
                tx.execute(
                    "UPDATE runs SET status = 'queued', status_reason = :reason WHERE id = :run",
                    {"run": run_id, "reason": _paused_reason(why, moved)},
                )
            return int(moved)

        return self.database.transact(body)

    # ---- taking back the claims of lost workers -----------------------------------------

    def local_holders(self, worker: WorkerIdentity) -> set[int]:
        """PIDs of the other workers on this node that hold claims."""
        sql = (
            "SELECT DISTINCT worker_pid FROM attempt_queue "
            "WHERE state = :claimed AND worker_node = :node AND worker != :worker"
        )
        params = {"claimed": CLAIMED, "node": worker.node, "worker": worker.id}
        return {row[0] for row in self.database.rows(sql, params) if row[0] is not None}

    def reclaim(self, worker: WorkerIdentity, dead_pids: Iterable[int] = ()) -> list[ResumeRecord]:
        """Take back the claims whose lease expired, and those of this node's workers whose
        process is gone (`dead_pids`): re-queued, or the run failed when it asked for that."""
        dead = sorted(set(dead_pids))
        params: dict[str, Any] = {"claimed": CLAIMED, "worker": worker.id}
        lost = (
            f"lease_expires_at < {self._later(0, params, 'now')} "
            "OR (stuck_since IS NOT NULL AND worker != :worker)"
        )
        if dead:
            pids = in_list("pid", dead, params)
            lost += f" OR (worker_node = :node AND worker_pid IN ({pids}) AND worker != :worker)"
            params["node"] = worker.node
        stale = f"SELECT {_STALE_COLUMNS} FROM attempt_queue WHERE state = :claimed AND ({lost})"

        def body(tx: Transaction) -> list[ResumeRecord]:
            run_ids = {_Claim(*row).run_id for row in tx.execute(stale, params).rows}
            locked_runs = self._lock_runs(tx, run_ids)
            groups: dict[tuple[str, str], list[_Claim]] = defaultdict(list)
            for row in tx.execute(self._locked(stale, skip_locked=True), params).rows:
                claim = _Claim(*row)
                if claim.run_id in locked_runs:
                    groups[(claim.run_id, claim.worker)].append(claim)
            resumes = []
            for (run_id, lost_worker), claims in sorted(groups.items()):
                cause = _lost_cause(claims, worker, dead)
                resume = self._take_back(
                    tx, worker, locked_runs[run_id], lost_worker, cause, claims
                )
                if resume is not None:
                    resumes.append(resume)
            return resumes

        return self.database.transact(body)

    def _take_back(
        self,
        tx: Transaction,
        worker: WorkerIdentity,
        run: _LockedRun,
        lost_worker: str,
        cause: str,
        claims: Sequence[_Claim],
    ) -> ResumeRecord | None:
        params: dict[str, Any] = {}
        ids = in_list("item", [claim.id for claim in claims], params)
        status = tx.execute("SELECT status FROM runs WHERE id = :run", {"run": run.id}).rows[0][0]
        if status not in ACTIVE_RUN_STATUSES:  # ended already (failed for an earlier lost worker)
            tx.execute(
                f"UPDATE attempt_queue SET {UNCLAIMED} WHERE id IN ({ids})",
                {**params, "unclaimed_state": CANCELLED},
            )
            return None
        if run.settings.get("on_crash") == "fail":
            reason = f"worker {lost_worker} was lost ({cause}); --on-crash fail"
            stopped = self._stop(tx, run.id, "failed", reason)
            action, kept, moved = "failed", stopped.kept, stopped.dropped
        else:
            tx.execute(
                f"UPDATE attempt_queue SET {UNCLAIMED} WHERE id IN ({ids})",
                {**params, "unclaimed_state": QUEUED},
            )
            action, kept, moved = "requeued", self._count(tx, run.id, (DONE,)), len(claims)
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
        _insert_resume(tx, resume)
        return resume

    def lost_elsewhere(
        self, worker: WorkerIdentity, ids: Iterable[int], lost: str, cause: str
    ) -> tuple[list[ResumeRecord], set[int]]:
        """Record that attempts `worker` holds lost the place they ran on (a Ray node that died
        mid-attempt, `lost` naming it): one resume per run, as for a lost worker. The worker keeps
        their claims and runs them again elsewhere; a run with `--on-crash fail` fails instead.
        Returns the resumes and the attempts to run again (still held, their run still on)."""
        params: dict[str, Any] = {"worker": worker.id, "claimed": CLAIMED}
        items = in_list("item", sorted(set(ids)), params)
        held = (
            f"SELECT {_STALE_COLUMNS} FROM attempt_queue "
            f"WHERE id IN ({items}) AND worker = :worker AND state = :claimed"
        )

        def body(tx: Transaction) -> tuple[list[ResumeRecord], set[int]]:
            run_ids = {_Claim(*row).run_id for row in tx.execute(held, params).rows}
            locked_runs = self._lock_runs(tx, run_ids)
            groups: dict[str, list[_Claim]] = defaultdict(list)
            for row in tx.execute(self._locked(held), params).rows:
                claim = _Claim(*row)
                if claim.run_id in locked_runs:
                    groups[claim.run_id].append(claim)
            resumes: list[ResumeRecord] = []
            again: set[int] = set()
            for run_id, claims in sorted(groups.items()):
                run = locked_runs[run_id]
                if run.settings.get("on_crash") == "fail":
                    resume = self._take_back(tx, worker, run, lost, cause, claims)
                    resumes += [resume] if resume is not None else []
                    continue
                resume = ResumeRecord(
                    run_id=run_id,
                    at=datetime.now(UTC),
                    action="requeued",
                    lost_worker=lost,
                    cause=cause,
                    by_worker=worker.id,
                    kept=self._count(tx, run_id, (DONE,)),
                    requeued=len(claims),
                )
                _insert_resume(tx, resume)
                resumes.append(resume)
                again |= {claim.id for claim in claims}
            return resumes, again

        return self.database.transact(body)

    # ---- reading ------------------------------------------------------------------------

    def scenario_ids(self, run_id: str) -> set[str]:
        """The scenarios a run has attempts of in the queue (what its filters, limit or rerun
        selected)."""
        sql = "SELECT DISTINCT scenario_id FROM attempt_queue WHERE run_id = :run"
        return {str(row[0]) for row in self.database.rows(sql, {"run": run_id})}

    def resumes(self, run_id: str) -> list[ResumeRecord]:
        return run_reads.run_resumes(self.database, run_id)


def _holder(worker: WorkerIdentity) -> dict[str, Any]:
    return {"worker": worker.id, "worker_node": worker.node, "worker_pid": worker.pid}


def _insert_resume(tx: Transaction, resume: ResumeRecord) -> None:
    values = asdict(resume)
    tx.execute(insert_values("run_resumes", tuple(values)), values)


def _lost_cause(claims: Sequence[_Claim], worker: WorkerIdentity, dead: Collection[int]) -> str:
    """Why a worker's claims were taken back (the first of them speaks for the others)."""
    if claims[0].worker_node == worker.node and claims[0].worker_pid in dead:
        return "its process is gone"
    if claims[0].stuck_since is not None:
        return "its watchdog found the attempt stuck"
    return "its lease expired"


def _paused_reason(why: str, left: int) -> str:
    return f"{why}; {left} attempts left queued (`benchyard worker` resumes the run)"
