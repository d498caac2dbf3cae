"""The scheduler: a worker runs queued attempts with a concurrency limit, holding each under a lease.

Every run goes through here. `benchyard run` enqueues its run already claimed by an in-process
worker and executes it to the end (`execute_run`); `benchyard worker` claims attempts of queued
runs in its own process (`Worker.serve`), rebuilding each run's agent and benchmark from what the
run recorded. A beat every FLUSH_INTERVAL_SEC writes finished tries; every heartbeat extends the
leases (and cancels attempts whose claim was lost: their run was cancelled or taken over); a
worker also takes back the claims of lost workers, so that a crashed run resumes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import time
import traceback
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from benchyard.agents.base import Agent
from benchyard.errors import BenchyardError
from benchyard.executors.local import LocalExecutor
from benchyard.runner.execute import (
    FLUSH_INTERVAL_SEC,
    RunContext,
    RunObserver,
    RunSettings,
    _AttemptExecutor,
    _NoObserver,
    _Writer,
    default_work_root,
)
from benchyard.runner.failures import FailureKind
from benchyard.runner.plan import PlannedAttempt, planned_ids, planned_scenario_ids
from benchyard.runner.run_events import Listeners
from benchyard.runner.run_scratch import SCRATCH_PREFIX, pid_alive, remove_scratch_of
from benchyard.runner.watchdog import ABANDON_GRACE_SEC, WATCHDOG_CAUSE, overdue
from benchyard.runner.workdir import make_scratch_layout
from benchyard.spec.loader import Benchmark
from benchyard.spec.models import Scenario
from benchyard.spec.scenario_index import scenarios_by_id
from benchyard.store.database import database_errors
from benchyard.store.queue import (
    ClaimedAttempt,
    Queue,
    RunNotActive,
    WorkerIdentity,
    WriteOutcome,
)
from benchyard.store.records import RunRecord
from benchyard.store.store import Store
from benchyard.untrusted import remove_tree

if TYPE_CHECKING:
    from benchyard.executors.base import Executor
    from benchyard.runner.spend import SpendGate

DEFAULT_LEASE_SEC = 60.0
IDLE_RUN_CLOSE_SEC = 30.0  # a run this worker holds nothing of is closed after this long
CLAIM_AHEAD_SEC = 1.0  # claim about this much work per lane at once...
MAX_CLAIM_FACTOR = 16  # ...but never more than this many attempts per lane
MAX_HEARTBEAT_SEC = 5.0
MAX_LOST_WORKERS = 2  # an attempt that was running when this many workers were lost fails

Log = Callable[[str], None]


@dataclass(frozen=True)
class WorkerOptions:
    concurrency: int = 8
    lease_sec: float = DEFAULT_LEASE_SEC
    poll_sec: float = 1.0  # how long an idle worker waits before looking at the queue again
    drain: bool = False  # stop once nothing is left to claim, instead of waiting for more
    run_id: str | None = None  # take attempts of this run only
    work_root: str | None = field(default_factory=default_work_root)

    @property
    def heartbeat_sec(self) -> float:
        return min(MAX_HEARTBEAT_SEC, self.lease_sec / 3)


@dataclass
class _ActiveRun:
    executor: _AttemptExecutor
    scenarios: Mapping[str, Scenario]  # read when asked for (spec/scenario_index.py)
    last_used: float = field(default_factory=time.monotonic)

    def planned(self, item: ClaimedAttempt) -> PlannedAttempt:
        return PlannedAttempt(self.scenarios[item.scenario_id], item.epoch)


class Worker:
    def __init__(
        self,
        store: Store,
        options: WorkerOptions,
        observer: RunObserver | None = None,
        log: Log | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.store = store
        self.executor: Executor = executor or LocalExecutor()  # where tries run (executors/)
        self.queue = Queue(store)
        self.options = options
        self.observer = observer or _NoObserver()
        self.log = log or (lambda message: None)
        self.identity = WorkerIdentity.here()
        self.writer = _Writer(self.queue, self.identity, self._written)
        self.active: dict[str, _ActiveRun] = {}
        self.refused: set[str] = set()
        self.pending: deque[ClaimedAttempt] = deque()
        self.running: dict[ClaimedAttempt, asyncio.Task[None]] = {}
        self.claiming = True  # False for an inline run: it executes what it enqueued, no more
        self.inline: str | None = None  # the inline run whose enqueued attempts are still read
        self.read_after = 0  # ...from the queue, a chunk at a time, after this queued attempt id
        self.idle_until = 0.0
        self.mean_attempt_sec = CLAIM_AHEAD_SEC  # moving average; slow until shown otherwise
        self._claim_lock: asyncio.Lock | None = None
        # what hears of its runs (run_events.py; automation/hooks.py where the command registered it)
        self.listeners = Listeners(store, self.log, options.poll_sec)
        self.gate: SpendGate | None = None  # a pilot or budget asked before each start (spend.py)
        self.gated = False  # the gate stopped the run: what is not started stays claimed
        self.watchdog_ended = 0  # attempts the watchdog recorded as timed out (past their ceiling)
        self.interrupted: set[int] = set()  # attempts stopped mid-run by cancelling this worker

    # ---- runs this worker executes --------------------------------------------------------

    def adopt(
        self,
        run: RunRecord,
        benchmark: Benchmark,
        agent: Agent,
        settings: RunSettings,
        scenario_ids: Collection[str] | None = None,
    ) -> None:
        """Execute attempts of `run` with this agent and benchmark (already built); its sandbox
        is refused or opened for the `scenario_ids` the run executes (default: all)."""
        scratch = Path(
            tempfile.mkdtemp(
                prefix=f"{SCRATCH_PREFIX}{run.id}-{os.getpid()}-", dir=settings.work_root
            )
        )
        make_scratch_layout(scratch)
        executor = self.executor.attempts(
            RunContext(
                benchmark,
                agent,
                run,
                settings,
                self.writer,
                self.observer,
                scratch,
                scenario_ids,
                self.gate.ledger if self.gate else None,
            )
        )
        self.active[run.id] = _ActiveRun(executor, scenarios_by_id(benchmark.scenarios))
        self.observer.started(run)

    def _active_for(self, item: ClaimedAttempt) -> _ActiveRun | None:
        found = self.active.get(item.run_id)
        if found is not None:
            found.last_used = time.monotonic()
            return found
        if item.run_id in self.refused:
            return None
        from benchyard.runner.isolation import refuse_store_url
        from benchyard.runner.recorded import recorded_agent, recorded_benchmark, recorded_settings

        run = self.store.get_run(item.run_id)
        try:
            benchmark = recorded_benchmark(run, "cancel the run and start a new one")
            settings = recorded_settings(run, {"work_root": self.options.work_root})
            agent = recorded_agent(run)
            refuse_store_url(agent, self.store.url)  # a recorded run may predate the rule
            self.adopt(run, benchmark, agent, settings, self.queue.scenario_ids(run.id))
        except BenchyardError as error:
            self._refuse(run, str(error))
            return None
        planned = run.planned_attempts
        self.log(
            f"run {run.id[:8]}: started ({planned} attempt{'' if planned == 1 else 's'} planned)"
        )
        return self.active[run.id]

    def _refuse(self, run: RunRecord, reason: str) -> None:
        """A run this worker cannot rebuild fails, with the reason recorded on it."""
        self.refused.add(run.id)
        self.pending = deque(item for item in self.pending if item.run_id != run.id)
        with contextlib.suppress(RunNotActive):
            self.queue.stop_run(run.id, "failed", f"worker {self.identity.id} refused it: {reason}")
        self.log(f"run {run.id[:8]}: failed: {reason}")

    async def _close_run(self, run_id: str) -> None:
        active = self.active.pop(run_id, None)
        if active is None:
            return
        if not active.executor.settings.keep_workdirs:
            remove_tree(active.executor.scratch, ignore_errors=True)
        await active.executor.aclose()

    # ---- serving ------------------------------------------------------------------------

    async def serve(self, inline: RunRecord | None = None) -> None:
        """Execute attempts until there is nothing left (in drain mode, or of the `inline` run,
        whose attempts this worker enqueued already claimed) or until cancelled; finished tries
        are written either way."""
        if inline is not None:
            self.claiming = False
            self.inline = inline.id
        self._claim_lock = asyncio.Lock()
        if self.claiming:
            self.listeners.start(schedules=True)
        beat = asyncio.create_task(self._beat())
        lanes = max(1, self.options.concurrency)
        if inline is not None:
            lanes = min(lanes, inline.planned_attempts)
        try:
            if self.claiming:
                self._reclaim()
            running = asyncio.gather(*(self._lane() for _ in range(lanes)))
            # A beat that fails (the store gone) stops the lanes; its error is raised below.
            beat.add_done_callback(lambda _: running.cancel())
            await running
        finally:
            beat.cancel()
            try:
                with contextlib.suppress(asyncio.CancelledError):
                    await beat
                self.writer.flush()
            finally:
                for run_id in list(self.active):
                    await self._close_run(run_id)
                await asyncio.to_thread(self.listeners.stop)

    async def _lane(self) -> None:
        while (item := await self._next()) is not None:
            active = self._active_for(item)
            if active is None:
                continue
            lost = self.queue.starting(self.identity, item.id)
            if lost is None:
                continue  # the claim was lost meanwhile (run cancelled, lease taken over)
            if lost >= MAX_LOST_WORKERS:
                self._give_up(active, item, lost)
                continue
            if self.gate is not None and not await self.gate.before_start(
                lambda: len(self.running)
            ):
                self.gated = True  # what is not started goes back to the queue (pause_run)
                self.pending.clear()
                self.claiming, self.inline = False, None
                continue
            attempt = asyncio.create_task(
                active.executor.attempt_with_retries(active.planned(item), item)
            )
            self.running[item] = attempt
            started = time.monotonic()
            try:
                await self._watch(active, item, attempt)
            except asyncio.CancelledError:
                self.interrupted.add(item.id)
                attempt.cancel()
                await asyncio.wait({attempt}, timeout=ABANDON_GRACE_SEC)
                raise
            finally:
                del self.running[item]
            self.mean_attempt_sec += (time.monotonic() - started - self.mean_attempt_sec) / 8
            if attempt.done() and not attempt.cancelled() and attempt.exception() is not None:
                self._record_escaped(active, item, attempt.exception())

    def _record_escaped(
        self, active: _ActiveRun, item: ClaimedAttempt, error: BaseException | None
    ) -> None:
        """An exception escaped the attempt's task (outside any try): recorded on the attempt as
        a harness error, with the traceback's last line, and the lane goes on."""
        last = traceback.format_exception_only(error)[-1].strip() if error else "unknown"
        cause = f"internal error outside any try: {last}"
        active.executor.record_fault(active.planned(item), item, FailureKind.HARNESS_ERROR, cause)
        self.log(f"run {item.run_id[:8]}: {item.scenario_id} (epoch {item.epoch}): {cause}")

    def _give_up(self, active: _ActiveRun, item: ClaimedAttempt, lost: int) -> None:
        """An attempt whose workers were lost while running it, MAX_LOST_WORKERS times, is not
        run again (it would crash this one too): it fails with that cause."""
        cause = (
            f"{lost} workers were lost (process gone, lease expired or stuck) while they ran "
            "this attempt; it is not run again"
        )
        active.executor.record_fault(active.planned(item), item, FailureKind.AGENT_CRASH, cause)
        self.log(f"run {item.run_id[:8]}: {item.scenario_id} (epoch {item.epoch}): {cause}")

    async def _watch(
        self, active: _ActiveRun, item: ClaimedAttempt, attempt: asyncio.Task[None]
    ) -> None:
        """Wait for the attempt up to its ceiling (runner/watchdog.py); past it, cancel it, and
        record it as timed out unless it ended by itself meanwhile. An attempt that does not even
        end when cancelled is left behind, its run free to end."""
        ceiling = active.executor.ceiling_sec(active.planned(item))
        if (await asyncio.wait({attempt}, timeout=ceiling))[0] or ceiling is None:
            return
        attempt.cancel()
        ended = (await asyncio.wait({attempt}, timeout=ABANDON_GRACE_SEC))[0]
        if ended and not attempt.cancelled():
            return  # it finished just as it was stopped: its own record stands
        self.watchdog_ended += 1
        active.executor.record_overrun(active.planned(item), item, ceiling)
        left = "" if ended else "; it did not end when cancelled and was left behind"
        self.log(
            f"run {item.run_id[:8]}: {item.scenario_id} (epoch {item.epoch}) ran past its "
            f"ceiling of {ceiling:g} s: {WATCHDOG_CAUSE}{left}"
        )

    def _claim_size(self) -> int:
        """One attempt per lane for slow attempts; for quick ones, about CLAIM_AHEAD_SEC of work
        per lane, so that claiming does not cost more than the attempts themselves."""
        lanes = self.options.concurrency
        per_lane = CLAIM_AHEAD_SEC / max(self.mean_attempt_sec, CLAIM_AHEAD_SEC / MAX_CLAIM_FACTOR)
        return lanes * max(1, int(per_lane))

    async def _next(self) -> ClaimedAttempt | None:
        assert self._claim_lock is not None
        while True:
            if self.pending:
                return self.pending.popleft()
            if self.inline is not None:
                self._read_inline()
                continue
            if not self.claiming:
                return None
            wait = self.idle_until - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            async with self._claim_lock:
                if self.pending or self.idle_until > time.monotonic():
                    continue
                claimed = self.queue.claim(
                    self.identity,
                    self._claim_size(),
                    self.options.lease_sec,
                    run_id=self.options.run_id,
                    skip_runs=self.refused,
                )
                self.pending.extend(claimed)
                if claimed:
                    continue
                if self.options.drain:
                    self.claiming = False
                    return None
                self.idle_until = time.monotonic() + self.options.poll_sec

    def _read_inline(self) -> None:
        """The next chunk of the inline run's attempts (none left: the run is all started)."""
        assert self.inline is not None
        chunk = self.queue.held(
            self.identity, self.inline, after=self.read_after, limit=self._claim_size()
        )
        if not chunk:
            self.inline = None
            return
        self.read_after = chunk[-1].id
        self.pending.extend(chunk)

    # ---- the beat: writes, heartbeats, lost workers ---------------------------------------

    async def _beat(self) -> None:
        next_heartbeat = next_reclaim = time.monotonic() + self.options.heartbeat_sec
        while True:
            await asyncio.sleep(FLUSH_INTERVAL_SEC)
            self._safely(self.writer.flush)
            now = time.monotonic()
            if now >= next_heartbeat:
                next_heartbeat = now + self.options.heartbeat_sec
                self._safely(self._heartbeat)
                if self.claiming:
                    await self._close_idle_runs()
            if self.claiming and now >= next_reclaim:
                next_reclaim = now + self.options.heartbeat_sec
                self._safely(self._reclaim)

    def _safely(self, action: Callable[[], None]) -> None:
        """A store that is briefly unreachable must not stop the worker: try again next beat."""
        try:
            action()
        except database_errors() as error:
            reason = getattr(error, "orig", None) or error
            self.log(f"store unavailable, retrying: {str(reason).splitlines()[0]}")

    def _heartbeat(self) -> None:
        self._mark_stuck()
        watched = {item.id for item in (*self.pending, *self.running)}
        held = self.queue.heartbeat(self.identity, self.options.lease_sec, among=watched)
        lost = [
            task for item, task in self.running.items() if item.id not in held and not task.done()
        ]
        dropped = [item for item in self.pending if item.id not in held]
        if not lost and not dropped:
            return
        self.pending = deque(item for item in self.pending if item.id in held)
        for task in lost:
            task.cancel()
        self.log(
            f"stopped {len(lost)} running and dropped {len(dropped)} waiting attempts whose "
            "claim was lost (run cancelled or ended, or the lease taken over)"
        )

    def _mark_stuck(self) -> None:
        """Mark in the queue the attempts whose phase the watchdog cancelled and that still run:
        shown as stuck, and free for another worker to take back."""
        now = asyncio.get_running_loop().time()
        stuck = [item for item, task in self.running.items() if overdue(task, now)]
        if stuck and self.queue.mark_stuck(self.identity, [item.id for item in stuck]):
            names = ", ".join(f"{item.scenario_id} (epoch {item.epoch})" for item in stuck)
            self.log(f"stuck: {names}: cancelled by the watchdog, still running")

    def _reclaim(self) -> None:
        dead = {pid for pid in self.queue.local_holders(self.identity) if not pid_alive(pid)}
        for resume in self.queue.reclaim(self.identity, dead):
            what = "re-queued" if resume.action == "requeued" else "cancelled; run failed"
            self.log(
                f"run {resume.run_id[:8]}: worker {resume.lost_worker} was lost "
                f"({resume.cause}): kept {resume.kept} finished attempts, {what} {resume.requeued}"
            )
        remove_scratch_of(dead, self.options.work_root)

    async def _close_idle_runs(self) -> None:
        """Close the runs this worker has held nothing of for a while (rebuilt when it claims
        more of them), so that a long-lived worker does not keep every run's workdirs."""
        busy = {item.run_id for item in (*self.pending, *self.running)}
        stale = time.monotonic() - IDLE_RUN_CLOSE_SEC
        for run_id, active in list(self.active.items()):
            if run_id not in busy and active.last_used < stale:
                await self._close_run(run_id)

    def _written(self, outcome: WriteOutcome) -> None:
        if outcome.discarded:
            self.log(f"discarded {outcome.discarded} tries whose claim was lost")
        for run_id in outcome.ended_runs:
            self.log(f"run {run_id[:8]}: finished")
            self.listeners.run_ended(run_id)


async def execute_run(
    store: Store,
    benchmark: Benchmark,
    agent: Agent,
    plan: Sequence[PlannedAttempt],
    run: RunRecord,
    settings: RunSettings,
    observer: RunObserver | None = None,
    gate: SpendGate | None = None,
    executor: Executor | None = None,
) -> RunRecord:
    """Run every planned attempt in this process, through the queue like any worker; on
    cancellation (Ctrl-C) keep what finished and mark the run interrupted. A `gate` (a pilot, a
    budget) that stops it leaves the attempts not started queued, and the run queued."""
    options = WorkerOptions(concurrency=settings.concurrency, work_root=settings.work_root)
    if gate is not None:
        observer = gate.observe(observer or _NoObserver())
    worker = Worker(store, options, observer, executor=executor)
    worker.gate = gate
    worker.queue.enqueue(
        run, planned_ids(plan), holder=worker.identity, lease_sec=options.lease_sec
    )
    try:
        worker.adopt(run, benchmark, agent, settings, planned_scenario_ids(plan))
        await worker.serve(run)
    finally:
        paused = False
        if gate is not None and gate.stop_reason is not None and worker.gated:
            with contextlib.suppress(RunNotActive):
                paused = worker.queue.pause_run(run.id, worker.identity, gate.stop_reason) > 0
        if not paused:
            with contextlib.suppress(RunNotActive):
                worker.queue.stop_run(run.id, "interrupted")
        finished = store.get_run(run.id)
        run.status, run.finished_at = finished.status, finished.finished_at
        run.status_reason = finished.status_reason
    return run


async def serve_queue(
    store: Store,
    options: WorkerOptions,
    observer: RunObserver | None = None,
    log: Log | None = None,
    executor: Executor | None = None,
) -> Worker:
    """Run a worker on the queue until it drains (with `options.drain`) or is cancelled; on
    cancellation the attempts it holds go back to the queue for another worker."""
    worker = Worker(store, options, observer, log, executor)
    try:
        await worker.serve()
    finally:
        released = worker.queue.release(worker.identity, worker.interrupted)
        if released:
            worker.log(f"released {released} claimed attempts back to the queue")
    return worker
