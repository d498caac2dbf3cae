"""The local asyncio scheduler: runs planned attempts with a concurrency limit, retries
infrastructure faults, and streams every finished try into the store."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import tempfile
import time
import traceback
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from benchyard import __version__
from benchyard.agents.base import Agent, AgentResult, AgentTask
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.grading import grade
from benchyard.runner.plan import PlannedAttempt
from benchyard.runner.provenance import git_state, host_name
from benchyard.runner.trajectory import Event, token_totals
from benchyard.runner.workdir import AttemptDirs, make_scratch_layout, prepare_dirs
from benchyard.sandbox.registry import build_sandbox
from benchyard.spec.loader import Benchmark
from benchyard.store.records import AttemptRecord, RunRecord
from benchyard.store.store import Store

FLUSH_EVERY = 256
FLUSH_INTERVAL_SEC = 0.25
MAX_BACKOFF_SEC = 30.0
ANSWER_CAP_CHARS = 64 * 1024


@dataclass(frozen=True)
class RunSettings:
    concurrency: int = 8
    epochs: int = 1
    limit: int | None = None
    filters: tuple[str, ...] = ()
    timeout_sec: float | None = None  # overrides the benchmark's limits when set
    max_turns: int | None = None
    retries: int = 3
    retry_backoff_sec: float = 1.0
    output_cap_bytes: int = 1024 * 1024
    keep_workdirs: bool = False
    sandbox: str = "none"
    work_root: str | None = field(default_factory=lambda: default_work_root())

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class RunObserver(Protocol):
    def started(self, run: RunRecord) -> None: ...
    def finished_try(self, record: AttemptRecord) -> None: ...


class _NoObserver:
    def started(self, run: RunRecord) -> None:
        pass

    def finished_try(self, record: AttemptRecord) -> None:
        pass


@dataclass
class _Writer:
    """Buffers finished tries and writes them in batches; everything buffered is written on exit."""

    store: Store
    buffer: list[AttemptRecord] = field(default_factory=list)
    last_flush: float = field(default_factory=time.monotonic)
    written: int = 0

    def add(self, record: AttemptRecord) -> None:
        self.buffer.append(record)
        if (
            len(self.buffer) >= FLUSH_EVERY
            or time.monotonic() - self.last_flush > FLUSH_INTERVAL_SEC
        ):
            self.flush()

    def flush(self) -> None:
        if self.buffer:
            batch, self.buffer = self.buffer, []
            self.store.record_attempts(batch)
            self.written += len(batch)
        self.last_flush = time.monotonic()


def new_run(
    benchmark: Benchmark,
    agent: Agent,
    settings: RunSettings,
    planned: int,
    agent_repo: Path,
    parent_run_id: str | None = None,
) -> RunRecord:
    git = git_state(agent_repo)
    return RunRecord(
        id=uuid.uuid4().hex[:16],
        status="running",
        benchmark_name=benchmark.name,
        benchmark_version=benchmark.version,
        benchmark_hash=benchmark.content_hash,
        benchmark_path=str(benchmark.root),
        agent_name=agent.name,
        agent_config=agent.describe(),
        agent_commit=git.commit,
        agent_dirty=git.dirty,
        agent_repo=git.repo,
        settings=settings.to_json(),
        benchyard_version=__version__,
        host=host_name(),
        started_at=datetime.now(UTC),
        planned_attempts=planned,
        parent_run_id=parent_run_id,
    )


async def execute_run(
    store: Store,
    benchmark: Benchmark,
    agent: Agent,
    plan: list[PlannedAttempt],
    run: RunRecord,
    settings: RunSettings,
    observer: RunObserver | None = None,
) -> RunRecord:
    """Run every planned attempt; on cancellation (Ctrl-C) keep what finished and mark the run interrupted."""
    observer = observer or _NoObserver()
    store.create_run(run)
    observer.started(run)
    writer = _Writer(store)
    scratch = Path(tempfile.mkdtemp(prefix=f"benchyard-{run.id}-", dir=settings.work_root))
    make_scratch_layout(scratch)
    executor = _AttemptExecutor(benchmark, agent, run, settings, writer, observer, scratch)
    status = "interrupted"
    try:
        items = iter(plan)
        workers = [
            executor.work(items) for _ in range(max(1, min(settings.concurrency, len(plan))))
        ]
        await asyncio.gather(*workers)
        status = "finished"
    finally:
        writer.flush()
        store.finish_run(run.id, status)
        run.status = status
        if not settings.keep_workdirs:
            shutil.rmtree(scratch, ignore_errors=True)
    return run


class _AttemptExecutor:
    def __init__(
        self,
        benchmark: Benchmark,
        agent: Agent,
        run: RunRecord,
        settings: RunSettings,
        writer: _Writer,
        observer: RunObserver,
        scratch: Path,
    ) -> None:
        self.benchmark = benchmark
        self.agent = agent
        self.run = run
        self.settings = settings
        self.writer = writer
        self.observer = observer
        self.scratch = scratch
        self.sandbox = build_sandbox(settings.sandbox)

    async def work(self, items: Iterator[PlannedAttempt]) -> None:
        for planned in items:
            await self.attempt_with_retries(planned)

    async def attempt_with_retries(self, planned: PlannedAttempt) -> None:
        for try_number in range(1, self.settings.retries + 2):
            record, failure = await self.one_try(planned, try_number)
            retry = (
                failure is not None and failure.policy.retry and try_number <= self.settings.retries
            )
            record.superseded = retry
            self.writer.add(record)
            self.observer.finished_try(record)
            if not retry:
                return
            await asyncio.sleep(backoff_delay(self.settings.retry_backoff_sec, try_number))

    async def one_try(
        self, planned: PlannedAttempt, try_number: int
    ) -> tuple[AttemptRecord, AttemptFailure | None]:
        scenario = planned.scenario
        limits = self.benchmark.limits_for(scenario)
        timeout = self.settings.timeout_sec or limits.timeout_sec or 60.0
        max_turns = self.settings.max_turns or limits.max_turns or 10
        attempt_id = uuid.uuid4().hex
        started, clock = datetime.now(UTC), time.perf_counter()
        record = AttemptRecord(
            id=attempt_id,
            run_id=self.run.id,
            scenario_id=scenario.id,
            category=scenario.category,
            epoch=planned.epoch,
            try_number=try_number,
            verdict="error",
            score=0.0,
            started_at=started,
            finished_at=started,
            duration_sec=0.0,
            negative=scenario.negative,
        )
        dirs: AttemptDirs | None = None
        failure: AttemptFailure | None = None
        result = AgentResult()
        try:
            dirs = self._prepare(attempt_id, planned)
            task = AgentTask(
                scenario,
                attempt_id,
                dirs.workdir if dirs else None,
                dirs.io_dir if dirs else None,
                timeout,
                max_turns,
                self.settings.output_cap_bytes,
                self.sandbox,
            )
            result = await self.agent.run(task)
            if result.turns > max_turns:
                raise AttemptFailure(
                    FailureKind.MAX_TURNS, f"used {result.turns} turns, over max_turns {max_turns}"
                )
            outcome = grade(scenario, result.answers, result.trajectory, task.workdir)
            record.verdict = "passed" if outcome.passed else "failed"
            record.score, record.checks, record.cause = outcome.score, outcome.checks, outcome.cause
        except AttemptFailure as caught:
            failure = caught
            result = caught.partial or result
        except Exception as error:
            failure = AttemptFailure(FailureKind.HARNESS_ERROR, _describe(error))
        finally:
            if dirs is not None and not self.settings.keep_workdirs:
                dirs.remove()
        if failure is not None:
            record.verdict, record.cause, record.failure_kind = (
                failure.policy.verdict,
                failure.message,
                failure.kind,
            )
            result.trajectory.append(
                Event(kind="error", content=failure.message, data={"kind": failure.kind})
            )
        _fill_evidence(record, result, max_turns)
        record.finished_at = datetime.now(UTC)
        record.duration_sec = time.perf_counter() - clock
        return record, failure

    def _prepare(self, attempt_id: str, planned: PlannedAttempt) -> AttemptDirs | None:
        if not self.agent.needs_workdir:
            return None
        try:
            return prepare_dirs(
                self.scratch,
                attempt_id,
                planned.scenario,
                self.benchmark.scenario_dir(planned.scenario),
            )
        except OSError as error:
            raise AttemptFailure(
                FailureKind.SANDBOX_START, f"could not prepare the workdir: {error}"
            ) from error


def _fill_evidence(record: AttemptRecord, result: AgentResult, max_turns: int) -> None:
    record.answer = result.answer[:ANSWER_CAP_CHARS]
    record.stdout, record.stdout_dropped_bytes = result.stdout.text, result.stdout.dropped_bytes
    record.stderr, record.stderr_dropped_bytes = result.stderr.text, result.stderr.dropped_bytes
    record.trajectory = result.trajectory
    record.turns = result.turns
    record.hit_max_turns = result.turns >= max_turns
    record.tokens_in, record.tokens_out, record.cost_usd = token_totals(result.trajectory)


def default_work_root() -> str | None:
    """Where attempt workdirs go: BENCHYARD_WORK_ROOT, else RAM-backed /dev/shm when writable
    (creating files there is ~50x cheaper than on a disk), else the system's temporary directory."""
    configured = os.environ.get("BENCHYARD_WORK_ROOT")
    if configured:
        return configured
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def backoff_delay(base_sec: float, try_number: int) -> float:
    """Exponential backoff with jitter: base * 2^(n-1), scaled by a random factor in [0.5, 1.5)."""
    delay: float = min(MAX_BACKOFF_SEC, base_sec * 2 ** (try_number - 1))
    return delay * (0.5 + random.random())


def _describe(error: BaseException) -> str:
    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return f"internal error {type(error).__name__}: {error}{where}"
