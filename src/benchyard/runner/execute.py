"""Executing attempts: one try of an attempt in its workdir (`one_try`), retries of
infrastructure faults with every try kept, and the batched writer that streams finished tries into
the queue. Scheduling (which attempt runs when, and where) is runner/worker.py's."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import traceback
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from benchyard import __version__, secrets
from benchyard.agents.base import Agent, AgentResult, AgentTask
from benchyard.backoff import MAX_BACKOFF_SEC, backoff_delay
from benchyard.bridge.ledger import RunSpend
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.grading import grade
from benchyard.runner.isolation import egress_for, open_sandbox, request_for
from benchyard.runner.plan import PlannedAttempt
from benchyard.runner.provenance import agent_git_state, host_name
from benchyard.runner.trajectory import Event, judge_totals, token_totals
from benchyard.runner.two_phase import CodingAttempt, needs_two_phase, run_agent
from benchyard.runner.watchdog import (
    WATCHDOG_CAUSE,
    attempt_ceiling_sec,
    grading_limit_sec,
    overrun,
)
from benchyard.runner.workdir import AttemptDirs, prepare_dirs
from benchyard.sandbox.base import Sandbox
from benchyard.sandbox.network import canonical_network
from benchyard.sandbox.registry import default_sandbox_name
from benchyard.spec.loader import Benchmark
from benchyard.spec.models import Scenario
from benchyard.store.database import database_errors
from benchyard.store.queue import ClaimedAttempt, Queue, WorkerIdentity, WriteOutcome
from benchyard.store.records import AttemptRecord, RunRecord

if TYPE_CHECKING:
    from benchyard.providers.judge import Judge

FLUSH_EVERY = 256
FLUSH_INTERVAL_SEC = 0.25
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
    sandbox: str = field(default_factory=default_sandbox_name)  # bwrap | docker | none
    allow_unsandboxed: bool = False  # let `none` run agent commands and model-written code
    # What an agent command's sandbox reaches (code checks never have a network): none; bridge
    # (its model bridge only); HOST:PORT,... (the bridge and those, through the egress proxy);
    # all (the host's network). allow_network: `all`, as runs recorded it before `network`
    # existed; the two are kept in agreement.
    network: str = "bridge"
    allow_network: bool = False
    work_root: str | None = field(default_factory=lambda: default_work_root())
    on_crash: str = "resume"  # what a lost worker means for the run: resume | fail
    judge: dict[str, Any] | None = None  # the judge model's settings (providers.judge.JudgeConfig)
    profile: str | None = None  # the benchmark's named subset (spec/profiles.py); None: full

    def __post_init__(self) -> None:
        object.__setattr__(self, "network", canonical_network(self.network))
        if self.allow_network:
            object.__setattr__(self, "network", "all")
        object.__setattr__(self, "allow_network", self.network == "all")

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
    """Buffers finished tries and writes them in batches (every FLUSH_EVERY tries, or
    FLUSH_INTERVAL_SEC: the worker also flushes on that beat); a try is written only while its
    worker still holds the attempt. A batch that could not be written stays buffered."""

    queue: Queue
    worker: WorkerIdentity
    on_write: Callable[[WriteOutcome], None]
    buffer: list[tuple[AttemptRecord, int]] = field(default_factory=list)
    last_flush: float = field(default_factory=time.monotonic)
    written: int = 0

    def add(self, record: AttemptRecord, item: ClaimedAttempt) -> None:
        self.buffer.append((record, item.id))
        if (
            len(self.buffer) >= FLUSH_EVERY
            or time.monotonic() - self.last_flush > FLUSH_INTERVAL_SEC
        ):
            with contextlib.suppress(*database_errors()):  # kept: the worker's beat tries again
                self.flush()

    def flush(self) -> None:
        self.last_flush = time.monotonic()
        if not self.buffer:
            return
        batch, self.buffer = self.buffer, []
        try:
            outcome = self.queue.write(self.worker, batch)
        except BaseException:
            self.buffer = batch + self.buffer
            raise
        self.written += outcome.written
        self.on_write(outcome)


def new_run(
    benchmark: Benchmark,
    agent: Agent,
    settings: RunSettings,
    planned: int,
    agent_repo: Path | None,
    parent_run_id: str | None = None,
) -> RunRecord:
    git = agent_git_state(agent, agent_repo)
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
        agent_diff_hash=git.diff_hash,
        agent_repo=git.repo,
        settings={**settings.to_json(), **_provenance_settings(benchmark)},
        benchyard_version=__version__,
        host=host_name(),
        started_at=datetime.now(UTC),
        planned_attempts=planned,
        parent_run_id=parent_run_id,
    )


def _provenance_settings(benchmark: Benchmark) -> dict[str, Any]:
    """What the run records of its benchmark's origin: nothing for benchyard's own format, whose
    runs leave the importers (their package) unimported."""
    if not benchmark.provenance:
        return {}
    from benchyard.importers.metrics import run_settings_provenance

    return run_settings_provenance(benchmark.provenance)


@dataclass(frozen=True)
class ProposedRun:
    """A run before it is recorded: what an executor checks that it can execute."""

    settings: RunSettings
    benchmark: Benchmark
    agent: Agent
    store_url: str
    scenarios: Sequence[Scenario]


@dataclass(frozen=True)
class RunContext:
    """One run as a worker executes it, resolved once: what every executor of its attempts is
    given, wherever its tries run."""

    benchmark: Benchmark
    agent: Agent
    run: RunRecord
    settings: RunSettings
    writer: _Writer
    observer: RunObserver
    scratch: Path
    scenario_ids: Collection[str] | None = None  # None: every scenario of the benchmark
    run_spend: RunSpend | None = None  # the run's spend under a --budget, in this process

    @property
    def store_url(self) -> str:
        return self.writer.queue.store.url

    def scenarios(self) -> Sequence[Scenario]:
        """The scenarios the run executes: its sandbox is refused or opened for these (chosen by
        id, not read: spec/scenario_index.py)."""
        from benchyard.spec.scenario_index import narrowed

        ids, every = self.scenario_ids, self.benchmark.scenarios
        if ids is None or len(ids) == len(every):  # the run's ids are the benchmark's
            return every
        return narrowed(every, lambda scenario: scenario.id in ids)

    def proposed(self) -> ProposedRun:
        """The run as its executor checks it."""
        return ProposedRun(
            self.settings, self.benchmark, self.agent, self.store_url, self.scenarios()
        )


def _judge(settings: dict[str, Any] | None) -> Judge | None:
    """The judge a run recorded, or None; its provider client is imported only for a run with one."""
    if not settings:
        return None
    from benchyard.providers.judge import build_judge

    return build_judge(settings)


class _AttemptExecutor:
    run_spend: RunSpend | None = None  # the run's spend under --budget, for tries in this process

    def __init__(self, context: RunContext) -> None:
        self._bind(context)
        chosen = None if context.scenario_ids is None else context.scenarios()
        self.sandbox = open_sandbox(
            context.settings, context.benchmark, context.agent, context.store_url, chosen
        )
        self.egress = egress_for(context.settings, context.store_url)
        self.judge = _judge(context.settings.judge)

    def _bind(self, context: RunContext) -> None:
        """What every executor of a run's attempts holds, wherever its tries run."""
        self.benchmark = context.benchmark
        self.agent = context.agent
        self.run = context.run
        self.settings = context.settings
        self.writer = context.writer
        self.observer = context.observer
        self.scratch = context.scratch
        self.run_spend = context.run_spend
        self._tries_written: dict[int, int] = {}  # queued attempt id: its last try written, retried

    async def aclose(self) -> None:
        """Close the agent's and the judge's connections (their clients live for the run)."""
        for owner in (self.agent, self.judge):
            closer = getattr(owner, "aclose", None)
            if closer is not None:
                await closer()

    def ceiling_sec(self, planned: PlannedAttempt) -> float | None:
        """The longest the attempt can take, all its tries and their backoff, while each phase
        keeps its limits (runner/watchdog.py); None: no ceiling."""
        tries = self.settings.retries + 1
        backoff = self.settings.retries * MAX_BACKOFF_SEC * 1.5
        return attempt_ceiling_sec(
            self._timeout_sec(planned.scenario), planned.scenario, tries, backoff
        )

    def record_overrun(self, planned: PlannedAttempt, item: ClaimedAttempt, ceiling: float) -> None:
        """Write the final try of an attempt the watchdog stopped at its ceiling: timed out."""
        try_number = self._tries_written.pop(item.id, item.tries) + 1
        record = _blank_record(uuid.uuid4().hex, self.run.id, planned, try_number)
        failure = AttemptFailure(
            FailureKind.AGENT_TIMEOUT,
            f"the attempt ran past its ceiling of {ceiling:g} s (all its tries): {WATCHDOG_CAUSE}",
        )
        _apply_failure(record, AgentResult(), failure)
        record.verdict, record.cause = failure.outcome(retried=False, tries=try_number)
        record.threshold = planned.scenario.threshold
        record.scenario_hash = self.benchmark.scenario_hash(planned.scenario)
        self.writer.add(record, item)
        self.observer.finished_try(record)

    def record_fault(
        self, planned: PlannedAttempt, item: ClaimedAttempt, kind: FailureKind, cause: str
    ) -> None:
        """Write the final try of an attempt that ended outside any try: an exception that
        escaped its task (harness_error), or the workers it crashed (agent_crash)."""
        try_number = self._tries_written.pop(item.id, item.tries) + 1
        record = _blank_record(uuid.uuid4().hex, self.run.id, planned, try_number)
        failure = AttemptFailure(kind, cause)
        _apply_failure(record, AgentResult(), failure)
        record.verdict, record.cause = failure.outcome(retried=False, tries=try_number)
        record.threshold = planned.scenario.threshold
        record.scenario_hash = self.benchmark.scenario_hash(planned.scenario)
        secrets.scrub_in_place(record, failure)
        self.writer.add(record, item)
        self.observer.finished_try(record)

    async def attempt_with_retries(self, planned: PlannedAttempt, item: ClaimedAttempt) -> None:
        """Try until a try is final; a resumed attempt goes on from the tries already written. A
        retried try is an uncounted error; the final one keeps the failure table's verdict, so a
        fault only the agent claims counts against it once its retries are spent."""
        first = item.tries + 1
        for try_number in range(first, max(first, self.settings.retries + 1) + 1):
            record, failure = await self.one_try(planned, try_number)
            retry = (
                failure is not None and failure.policy.retry and try_number <= self.settings.retries
            )
            record.superseded = retry
            if failure is not None:
                record.verdict, record.cause = failure.outcome(retried=retry, tries=try_number)
            record.threshold = planned.scenario.threshold
            self.writer.add(record, item)
            self.observer.finished_try(record)
            if not retry:
                self._tries_written.pop(item.id, None)
                return
            self._tries_written[item.id] = try_number
            await asyncio.sleep(backoff_delay(self.settings.retry_backoff_sec, try_number))

    async def one_try(
        self, planned: PlannedAttempt, try_number: int
    ) -> tuple[AttemptRecord, AttemptFailure | None]:
        scenario = planned.scenario
        limits = self.benchmark.limits_for(scenario)
        timeout = self._timeout_sec(scenario)
        max_turns = self.settings.max_turns or limits.max_turns or 10
        attempt_id = uuid.uuid4().hex
        clock = time.perf_counter()
        record = _blank_record(attempt_id, self.run.id, planned, try_number)
        record.scenario_hash = self.benchmark.scenario_hash(scenario)
        dirs: AttemptDirs | None = None
        coding: CodingAttempt | None = None
        failure: AttemptFailure | None = None
        result = AgentResult()
        try:
            dirs = self._prepare(attempt_id, planned)
            coding = await self._start_coding(scenario, dirs)
            task = AgentTask(
                scenario,
                attempt_id,
                dirs.workdir if dirs else None,
                dirs.io_dir if dirs else None,
                timeout,
                max_turns,
                self.settings.output_cap_bytes,
                self.sandbox_for(scenario, agent=True),
                scenario_dir=self.benchmark.scenario_dir(scenario),
                run_spend=self.run_spend.tab(attempt_id) if self.run_spend else None,
            )
            result = await overrun(
                run_agent(self.agent, task, coding), timeout, FailureKind.AGENT_TIMEOUT, "the agent"
            )
            if result.turns > max_turns and not result.claimed_over_max_turns:
                raise AttemptFailure(
                    FailureKind.MAX_TURNS, f"used {result.turns} turns, over max_turns {max_turns}"
                )
            outcome = await overrun(
                grade(
                    scenario,
                    result.answers,
                    result.trajectory,
                    task.workdir,
                    self.judge,
                    open_code=coding.open_workspace if coding else None,
                ),
                grading_limit_sec(scenario),
                FailureKind.CHECK_ERROR,
                "grading",
            )
            record.verdict = "passed" if outcome.passed else "failed"
            record.score, record.checks, record.cause = outcome.score, outcome.checks, outcome.cause
            record.failure_kind = outcome.failure_kind  # ungradable_answer: a check raised on it
        except AttemptFailure as caught:
            failure = caught
            result = caught.partial or result
        except Exception as error:
            failure = AttemptFailure(FailureKind.HARNESS_ERROR, _describe(error))
        finally:
            if dirs is not None and not self.settings.keep_workdirs:
                dirs.remove()
            if coding is not None:
                record.patch = coding.stored_patch()
                if not self.settings.keep_workdirs:
                    coding.remove()
        if failure is not None:
            _apply_failure(record, result, failure)
        _fill_evidence(record, result, failure)
        record.finished_at = datetime.now(UTC)
        record.duration_sec = time.perf_counter() - clock
        secrets.scrub_in_place(record, failure)  # before it is stored or shown (its cause too)
        return record, failure

    def _timeout_sec(self, scenario: Scenario) -> float:
        """The agent's wall-clock limit for one try of the scenario."""
        return self.settings.timeout_sec or self.benchmark.limits_for(scenario).timeout_sec or 60.0

    def _prepare(self, attempt_id: str, planned: PlannedAttempt) -> AttemptDirs | None:
        if not self.agent.needs_workdir and not needs_two_phase(planned.scenario):
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

    def sandbox_for(self, scenario: Scenario, *, agent: bool = False) -> Sandbox:
        """The run's sandbox as the scenario asks for it (image, network, limits); the agent's
        own also with the host's network under `--network all`, its model bridge unless
        `--network none`, and the egress proxy to the destinations `--network` names."""
        network = agent and self.settings.network == "all"
        bridge = agent and self.settings.network != "none"
        egress = self.egress if agent else None
        request = request_for(self.benchmark, scenario, network=network, bridge=bridge)
        return self.sandbox.configured(replace(request, egress=egress))

    async def _start_coding(
        self, scenario: Scenario, dirs: AttemptDirs | None
    ) -> CodingAttempt | None:
        """Snapshot the pristine workdir of a coding scenario (runner/two_phase.py)."""
        if dirs is None or not needs_two_phase(scenario):
            return None
        return await CodingAttempt(
            scenario,
            self.benchmark.scenario_dir(scenario),
            dirs.workdir,
            self.scratch / "verify" / dirs.workdir.name,
            self.sandbox_for(scenario),
            self.settings.output_cap_bytes,
        ).start()


def _blank_record(
    attempt_id: str, run_id: str, planned: PlannedAttempt, try_number: int
) -> AttemptRecord:
    """The record of a try about to start: an error until something better is known."""
    started = datetime.now(UTC)
    return AttemptRecord(
        id=attempt_id,
        run_id=run_id,
        scenario_id=planned.scenario.id,
        category=planned.scenario.category,
        epoch=planned.epoch,
        try_number=try_number,
        verdict="error",
        score=0.0,
        started_at=started,
        finished_at=started,
        duration_sec=0.0,
        negative=planned.scenario.negative,
        user_turns=len(planned.scenario.stimulus.turns),
    )


def _apply_failure(record: AttemptRecord, result: AgentResult, failure: AttemptFailure) -> None:
    """The verdict the failure table gives, its cause, and an error event in the trajectory."""
    record.verdict, record.cause = failure.policy.verdict, failure.message
    record.failure_kind = failure.kind
    result.trajectory.append(
        Event(kind="error", content=failure.message, data={"kind": failure.kind})
    )


def _fill_evidence(
    record: AttemptRecord, result: AgentResult, failure: AttemptFailure | None
) -> None:
    record.answer = result.answer[:ANSWER_CAP_CHARS]
    if len(result.answers) > 1:
        record.answers = [answer[:ANSWER_CAP_CHARS] for answer in result.answers]
    record.stdout, record.stdout_dropped_bytes = result.stdout.text, result.stdout.dropped_bytes
    record.stderr, record.stderr_dropped_bytes = result.stderr.text, result.stderr.dropped_bytes
    record.trajectory = result.trajectory
    record.turns = result.turns
    # Out of turns only when the agent wanted another one (a single-turn scenario with
    # max_turns 1 that answered in its one turn did not).
    record.hit_max_turns = result.claimed_over_max_turns or (
        failure is not None and failure.kind == FailureKind.MAX_TURNS
    )
    record.tokens_in, record.tokens_out, record.cost_usd = token_totals(result.trajectory)
    judged = judge_totals(result.trajectory)
    record.judge_tokens_in, record.judge_tokens_out, record.judge_cost_usd = judged


def default_work_root() -> str | None:
    """Where attempt workdirs go: BENCHYARD_WORK_ROOT, else RAM-backed /dev/shm when writable
    (creating files there is ~50x cheaper than on a disk), else the system's temporary directory."""
    configured = os.environ.get("BENCHYARD_WORK_ROOT")
    if configured:
        return configured
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def _describe(error: BaseException) -> str:
    frame = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    where = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return f"internal error {type(error).__name__}: {error}{where}"
