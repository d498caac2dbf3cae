"""The Ray executor, on the worker's side: each try of a claimed attempt becomes a Ray task, run
on the node Ray picks (executors/ray/node.py), and its record comes back here, where the worker
writes it as it writes a local try: in the transaction that marks the attempt done, and only
while the worker still holds the claim.

- **Resources.** Each task asks for what its scenario declares (executors/ray/resources.py); a
  gate keeps no more tasks in flight than the cluster's live resources can run, so a run of
  100,000 attempts never sits in Ray's scheduler or object store: the rest wait in the queue.
- **No retries by Ray.** Tasks are submitted with `max_retries=0`: Ray never runs a try again on
  its own. A try whose node died (or whose Ray worker crashed, or whose result was lost with its
  node) is the worker's to take back: recorded on the run as a resume (or the run failed, with
  `--on-crash fail`), the attempt runs again, still under the worker's claim, wherever Ray places
  it; the try that was lost was never written, so nothing is counted twice. Faults of a node that
  did not die (it ran out of memory, it could not set up the job, its sandbox cannot work there)
  are an ordinary try that failed with `sandbox_start`: retried, kept as evidence, never counted
  against the agent.
- **Cancelling.** A try whose claim was lost (the run cancelled, the worker stopping) cancels its
  task; the node stops the sandbox as a local worker would, and a task that does not stop within
  CANCEL_GRACE_SEC is killed with its Ray worker process.
- **Shipping.** The benchmark and the agent's own code travel through the object store, named by
  content hash (executors/ray/shipping.py); benchyard itself travels with the job
  (`py_modules`), so every node runs this worker's version of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, update
from sqlalchemy.exc import SQLAlchemyError

import benchyard
from benchyard import secrets
from benchyard.executors.base import ExecutorOptions, ExecutorUnavailable
from benchyard.executors.ray.node import (
    Finished,
    RunSpec,
    Shipped,
    ShippedCode,
    Started,
    Unready,
    run_try,
)
from benchyard.executors.ray.resources import Ask, Gate, ask_for, fits_somewhere
from benchyard.executors.ray.shipping import Bundle, code_to_ship, pack_benchmark, pack_code
from benchyard.runner.execute import ProposedRun, RunContext, _AttemptExecutor
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.isolation import (
    UnsandboxedRefused,
    refuse_store_on_shared_network,
    refuse_unsandboxed,
    request_for,
    sealed_paths,
)
from benchyard.runner.plan import PlannedAttempt
from benchyard.store.lite import shown_url
from benchyard.store.queue import CLAIMED, ClaimedAttempt
from benchyard.store.records import AttemptRecord
from benchyard.store.schema import attempt_queue

if TYPE_CHECKING:
    from benchyard.agents.base import Agent
    from benchyard.runner.execute import RunSettings, _Writer
    from benchyard.spec.loader import Benchmark
    from benchyard.spec.models import Scenario
    from benchyard.store.queue import Queue, WorkerIdentity
    from benchyard.store.records import RunRecord

CANCEL_GRACE_SEC = 15.0  # a cancelled try's time to stop its sandbox before its process is killed
LOST_GRACE_SEC = 0.5  # attempts lost with one node within this time are taken back together
MAX_NODE_LOSSES = 3  # an attempt whose node was lost this often ends its try as sandbox_start
PLACED_FLUSH_SEC = 0.5  # how often the nodes of attempts just started are written to the queue
LOST_NAME_CHARS = 120  # what run_resumes keeps of a lost node's name
AUTH_VARIABLE = "RAY_AUTH_MODE"

_CLAIMED: contextvars.ContextVar[ClaimedAttempt | None] = contextvars.ContextVar(
    "benchyard_ray_claimed", default=None
)
Log = Callable[[str], None]


class NodeLost(Exception):
    """The try's Ray node (or its worker process, or its result) was lost mid-attempt."""

    def __init__(self, node: str, cause: str, try_number: int) -> None:
        super().__init__(cause)
        self.node = node
        self.cause = cause
        self.try_number = try_number


def open_ray(options: ExecutorOptions) -> RayExecutor:
    return RayExecutor(options)


class RayExecutor:
    name = "ray"

    def __init__(self, options: ExecutorOptions) -> None:
        try:
            import ray
        except ImportError:
            raise ExecutorUnavailable(
                "the ray executor needs Ray, on this machine and on every node: "
                "pip install 'benchyard[ray]'"
            ) from None
        self.ray: Any = ray  # untyped where it matters
        self.log: Log = options.log or (lambda message: None)
        runtime_env: dict[str, Any] = {}
        if options.ship_benchyard:
            runtime_env = {
                "py_modules": [str(Path(benchyard.__file__).parent)],
                "excludes": ["__pycache__", "*.pyc"],
            }
        where = options.address or os.environ.get("RAY_ADDRESS") or "this machine"
        try:
            ray.init(
                address=options.address,
                runtime_env=runtime_env or None,
                namespace="benchyard",
                log_to_driver=False,
                logging_level=logging.WARNING,
                include_dashboard=False,
            )
        except Exception as error:  # Ray raises ConnectionError, RuntimeError, ValueError, ...
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            raise ExecutorUnavailable(
                f"cannot join the Ray cluster at {where}: {type(error).__name__}: {first}"
            ) from None
        self.remote = ray.remote(num_returns="streaming", max_retries=0, retry_exceptions=False)(
            run_try
        )
        self.remotes: dict[Ask, Any] = {}
        self.gate = Gate(ray.cluster_resources)
        self.bundles: dict[str, Shipped] = {}  # in the object store while a run uses them
        self.bundle_users: Counter[str] = Counter()
        self.losses: Counter[int] = Counter()
        self.lost_batches: dict[tuple[str, str], _LostBatch] = {}
        self.placed: dict[int, str] = {}
        self.queue: Queue | None = None
        self.worker: WorkerIdentity | None = None
        self._placer: asyncio.Task[None] | None = None

    # ---- the Executor interface -------------------------------------------------------------

    def lanes(self, asked: int | None) -> int:
        """`-j` when given; else every CPU of the cluster (an attempt asks for 1 by default)."""
        if asked:
            return asked
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def check(self, run: ProposedRun) -> None:
        settings, benchmark, scenarios = run.settings, run.benchmark, run.scenarios
        refuse_unsandboxed(settings, benchmark, run.agent, scenarios)
        refuse_store_on_shared_network(settings, benchmark, run.store_url, scenarios)
        self._refuse_network_without_token(settings, benchmark, scenarios)
        nodes = [
            dict(node.get("Resources") or {}) for node in self.ray.nodes() if node.get("Alive")
        ]
        for scenario in scenarios:
            ask = ask_for(benchmark, scenario)
            if not fits_somewhere(ask, nodes):
                raise ExecutorUnavailable(
                    f"scenario '{scenario.id}' asks for {ask.describe()}, which no node of the "
                    f"Ray cluster offers ({_offered(nodes)}): start a node with "
                    "`ray start --resources '{\"NAME\": N}'` (and --num-cpus, --num-gpus), or "
                    "change the scenario's limits"
                )

    def _refuse_network_without_token(
        self, settings: RunSettings, benchmark: Benchmark, scenarios: Sequence[Scenario]
    ) -> None:
        """With the network, an agent reaches the Ray cluster's ports; a cluster without token
        authentication runs whatever is submitted to it, outside any sandbox."""
        networked = settings.allow_network or any(
            request_for(benchmark, scenario).network for scenario in scenarios
        )
        if networked and os.environ.get(AUTH_VARIABLE, "").lower() != "token":
            raise UnsandboxedRefused(
                "refusing to give agents the network on a Ray cluster without token "
                "authentication: an agent could submit work to the cluster and run it outside "
                f"its sandbox; start the cluster and this worker with {AUTH_VARIABLE}=token "
                "(see docs/distributed.md), or run without the network"
            )

    def attempts(self, context: RunContext) -> RayAttempts:
        benchmark, agent, settings = context.benchmark, context.agent, context.settings
        self.check(context.proposed())
        self.queue, self.worker = context.writer.queue, context.writer.worker
        spec, shipped = self._ship(
            context.run, benchmark, agent, settings, context.scenario_ids, context.store_url
        )
        attempts = RayAttempts(self, spec, context)
        attempts.shipped = shipped
        return attempts

    def release(self, shipped: Collection[str]) -> None:
        """A run closed: let Ray free the bundles no other open run uses."""
        for sha256 in shipped:
            self.bundle_users[sha256] -= 1
            if self.bundle_users[sha256] <= 0:
                del self.bundle_users[sha256]
                self.bundles.pop(sha256, None)

    def close(self) -> None:
        if self._placer is not None:
            self._placer.cancel()
        self.bundles.clear()
        with contextlib.suppress(Exception):
            self.ray.shutdown()

    # ---- shipping ---------------------------------------------------------------------------

    def _ship(
        self,
        run: RunRecord,
        benchmark: Benchmark,
        agent: Agent,
        settings: RunSettings,
        scenario_ids: Collection[str] | None,
        store_url: str,
    ) -> tuple[Any, list[str]]:
        """The run's spec in the object store, with its benchmark and the agent's code (and the
        hashes of the bundles it holds)."""
        bench = self._put(pack_benchmark(benchmark.root))
        walls = [*sealed_paths(settings, benchmark, store_url), Path.cwd()]
        named = tuple(getattr(agent, "readable_paths", ()))
        code = tuple(
            ShippedCode(str(path), self._put(pack_code(path)))
            for path in code_to_ship(named, walls)
        )
        spec = RunSpec(
            run=run,
            scenario_ids=None if scenario_ids is None else tuple(sorted(scenario_ids)),
            benchmark=bench,
            code=code,
            env=named_variables(run.agent_config, run.settings.get("judge")),
            store_url=shown_url(store_url),
        )
        shipped = [bench.sha256, *(item.bundle.sha256 for item in code)]
        self.bundle_users.update(shipped)
        return self.ray.put(spec), shipped

    def _put(self, bundle: Bundle) -> Shipped:
        found = self.bundles.get(bundle.sha256)
        if found is None:
            found = self.bundles[bundle.sha256] = Shipped(bundle.sha256, self.ray.put(bundle.data))
        return found

    # ---- one try ----------------------------------------------------------------------------

    async def run_try(
        self,
        attempts: RayAttempts,
        planned: PlannedAttempt,
        try_number: int,
        item: ClaimedAttempt | None,
    ) -> tuple[AttemptRecord, AttemptFailure | None]:
        ask = attempts.asks[planned.scenario.id]
        node = ""
        async with self.gate.held(ask):
            task = self._remote_for(ask).remote(
                attempts.box, planned.scenario.id, planned.epoch, try_number
            )
            try:
                started = await _next(task)
                if isinstance(started, Started):
                    node = started.node
                    if item is not None:
                        self._place(item.id, node)
                reply = await _next(task)
            except asyncio.CancelledError:
                await self._cancel(task)
                raise
            except Exception as error:
                return self._fault(attempts, planned, try_number, item, node, error)
        if isinstance(reply, Unready):
            failure = AttemptFailure(FailureKind.SANDBOX_START, reply.message)
            return _failed_try(attempts.run.id, planned, try_number, failure, reply.node), failure
        if not isinstance(reply, Finished):
            failure = AttemptFailure(FailureKind.HARNESS_ERROR, f"unexpected reply {reply!r}")
            return _failed_try(attempts.run.id, planned, try_number, failure, node), failure
        if item is not None:
            self.losses.pop(item.id, None)
        kind_message = reply.failure
        return reply.record, None if kind_message is None else AttemptFailure(*kind_message)

    def _remote_for(self, ask: Ask) -> Any:
        """The task function with this ask's resources (made once per distinct ask)."""
        found = self.remotes.get(ask)
        if found is None:
            found = self.remotes[ask] = self.remote.options(**ask.ray_options())
        return found

    def _fault(
        self,
        attempts: RayAttempts,
        planned: PlannedAttempt,
        try_number: int,
        item: ClaimedAttempt | None,
        node: str,
        error: Exception,
    ) -> tuple[AttemptRecord, AttemptFailure]:
        """What a Ray error means for the try: a node fault it records (retried), or the node's
        loss (raised: the attempt is taken back)."""
        exceptions = self.ray.exceptions
        where = f"Ray node {node}" if node else "the Ray node"
        name = type(error).__name__
        kind: FailureKind | None
        if not isinstance(error, exceptions.RayError):
            kind, message = FailureKind.HARNESS_ERROR, f"internal error {name}: {error}"
        elif isinstance(error, exceptions.TaskCancelledError):
            kind, message = None, f"its Ray task was cancelled outside benchyard ({name})"
        elif isinstance(error, exceptions.NodeDiedError | exceptions.LocalRayletDiedError):
            kind, message = None, f"the Ray node died mid-attempt ({name})"
        elif isinstance(error, exceptions.WorkerCrashedError):
            kind, message = None, f"the Ray worker process running it died mid-attempt ({name})"
        elif isinstance(error, exceptions.ObjectLostError):
            kind, message = None, f"its result was lost with the node that held it ({name})"
        elif isinstance(error, exceptions.RuntimeEnvSetupError):
            kind, message = FailureKind.SANDBOX_START, f"{where} could not set up the job: {name}"
        elif isinstance(error, exceptions.OutOfMemoryError):
            kind = FailureKind.SANDBOX_START
            message = f"{where} ran out of memory and Ray killed the attempt's process"
        elif isinstance(error, exceptions.RayTaskError):
            kind = FailureKind.HARNESS_ERROR
            message = f"internal error on {where}: {_first_line(error)}"
        else:
            kind, message = None, f"Ray lost the task mid-attempt ({name})"
        if kind is None and item is not None:
            self.losses[item.id] += 1
            if self.losses[item.id] < MAX_NODE_LOSSES:
                raise NodeLost(node or "a Ray node", message, try_number)
            kind = FailureKind.SANDBOX_START
            message = f"{message}; its node was lost {self.losses.pop(item.id)} times"
        failure = AttemptFailure(kind or FailureKind.SANDBOX_START, message)
        return _failed_try(attempts.run.id, planned, try_number, failure, node), failure

    async def _cancel(self, task: Any) -> None:
        """Ask the node to stop the try; kill its process when it does not stop in time."""
        with contextlib.suppress(Exception):
            self.ray.cancel(task)
        try:
            await asyncio.wait_for(_drain(task), CANCEL_GRACE_SEC)
        except BaseException:
            with contextlib.suppress(Exception):
                self.ray.cancel(task, force=True)

    # ---- where attempts run, and the lost ones ------------------------------------------------

    def _place(self, queued_id: int, node: str) -> None:
        """Note where a claimed attempt started; written to the queue every PLACED_FLUSH_SEC."""
        self.placed[queued_id] = node
        if self._placer is None or self._placer.done():
            self._placer = asyncio.get_running_loop().create_task(self._write_placed())

    async def _write_placed(self) -> None:
        while self.placed:
            await asyncio.sleep(PLACED_FLUSH_SEC)
            placed, self.placed = self.placed, {}
            if self.queue is None or self.worker is None:
                continue
            statement = (
                update(attempt_queue)
                .where(
                    attempt_queue.c.id == bindparam("queued_id"),
                    attempt_queue.c.worker == self.worker.id,
                    attempt_queue.c.state == CLAIMED,
                )
                .values(node=bindparam("placed_on"))
            )
            rows = [{"queued_id": key, "placed_on": node} for key, node in placed.items()]
            with contextlib.suppress(SQLAlchemyError), self.queue.engine.begin() as connection:
                connection.execute(statement, rows)  # shown while in flight; best effort

    async def lost(self, item: ClaimedAttempt, lost: NodeLost, writer: _Writer) -> bool:
        """Record on its run that `item` lost its node (one resume per run for the attempts
        lost with one node at about the same time); True when it is to run again elsewhere,
        False when its run failed (`--on-crash fail`) or it is no longer held. The tries written
        before stay: the attempt goes on from them. Tried again until the store answers."""
        key = (lost.node, lost.cause)
        batch = self.lost_batches.get(key)
        if batch is None:
            loop = asyncio.get_running_loop()
            batch = self.lost_batches[key] = _LostBatch(loop.create_future())
            batch.task = loop.create_task(self._record_lost(key, lost, writer))
        batch.ids.append(item.id)
        again = await asyncio.shield(batch.done)
        return item.id in again

    async def _record_lost(self, key: tuple[str, str], lost: NodeLost, writer: _Writer) -> None:
        batch = self.lost_batches[key]
        try:
            await asyncio.sleep(LOST_GRACE_SEC)
            del self.lost_batches[key]
            while True:
                try:
                    writer.flush()  # the tries written before the lost one come first
                    resumes, again = writer.queue.lost_elsewhere(
                        writer.worker, batch.ids, lost.node[:LOST_NAME_CHARS], lost.cause
                    )
                    break
                except SQLAlchemyError as error:
                    self.log(f"store unavailable, retrying: {str(error).splitlines()[0]}")
                    await asyncio.sleep(1.0)
        except BaseException as error:  # the worker stopping, or a store gone for good
            self.lost_batches.pop(key, None)
            if isinstance(error, asyncio.CancelledError):
                batch.done.cancel()
            else:
                batch.done.set_exception(error)
            raise
        batch.done.set_result(again)
        for resume in resumes:
            what = "running again" if resume.action == "requeued" else "cancelled; run failed:"
            self.log(
                f"run {resume.run_id[:8]}: Ray node {lost.node} was lost ({lost.cause}): kept "
                f"{resume.kept} finished attempts, {what} {resume.requeued}"
            )


@dataclass
class _LostBatch:
    """Attempts lost with one node at about the same time, recorded together."""

    done: asyncio.Future[set[int]]  # the attempts to run again
    ids: list[int] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class RayAttempts(_AttemptExecutor):
    """One run's attempts as Ray tasks: retries, backoff and writes are runner/execute.py's own
    (`attempt_with_retries`); each try runs on a node (`one_try`)."""

    def __init__(
        self,
        cluster: RayExecutor,
        spec: Any,
        context: RunContext,
    ) -> None:
        # not _AttemptExecutor.__init__: the sandbox and the judge are opened on the nodes
        self._bind(context)
        self.cluster = cluster
        self.box = [spec]  # a list, so that Ray passes the reference to the tasks unfetched
        self.asks: dict[str, Ask] = {
            s.id: ask_for(context.benchmark, s) for s in context.benchmark.scenarios
        }
        self.shipped: list[str] = []  # the bundles its spec holds

    async def aclose(self) -> None:
        self.box.clear()  # Ray frees the spec once no task holds it
        self.cluster.release(self.shipped)
        self.shipped = []

    def ceiling_sec(self, planned: PlannedAttempt) -> float | None:
        """None: a try may wait for a node's resources for as long as the cluster is busy, which
        no ceiling can bound; each try's own phases are watched on its node (one_try)."""
        return None

    async def attempt_with_retries(self, planned: PlannedAttempt, item: ClaimedAttempt) -> None:
        """Tries as a local worker makes them; an attempt whose node was lost mid-try runs again
        (elsewhere: Ray places it), from the try that was lost, which was never written."""
        while True:
            token = _CLAIMED.set(item)
            try:
                await super().attempt_with_retries(planned, item)
                return
            except NodeLost as lost:
                if not await self.cluster.lost(item, lost, self.writer):
                    return
                item = replace(item, tries=lost.try_number - 1)
            finally:
                _CLAIMED.reset(token)

    async def one_try(
        self, planned: PlannedAttempt, try_number: int
    ) -> tuple[AttemptRecord, AttemptFailure | None]:
        return await self.cluster.run_try(self, planned, try_number, _CLAIMED.get())


# ---- helpers ------------------------------------------------------------------------------------


async def _next(task: Any) -> Any:
    """The next value a streaming Ray task yields."""
    ref = await task.__anext__()
    return await ref


async def _drain(task: Any) -> None:
    with contextlib.suppress(Exception):
        async for ref in task:
            with contextlib.suppress(Exception):
                await ref


def _failed_try(
    run_id: str, planned: PlannedAttempt, try_number: int, failure: AttemptFailure, node: str
) -> AttemptRecord:
    """The record of a try whose node could not run it, as one_try records a failed one."""
    import uuid

    from benchyard.agents.base import AgentResult
    from benchyard.runner.execute import _apply_failure, _blank_record, _fill_evidence

    record = _blank_record(uuid.uuid4().hex, run_id, planned, try_number)
    result = AgentResult()
    _apply_failure(record, result, failure)
    _fill_evidence(record, result, failure)
    record.node = node or None
    secrets.scrub_in_place(record, failure)
    return record


def named_variables(*configs: Any) -> dict[str, str]:
    """The variables an agent's and a judge's recorded configuration name (`api_key_env`,
    `headers_env`, `pass_env`, at any depth), with their values here, for the nodes."""
    names: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            for key, inner in value.items():
                if key == "api_key_env" and isinstance(inner, str):
                    names.add(inner)
                elif key == "headers_env" and isinstance(inner, Mapping):
                    names.update(str(name) for name in inner.values())
                elif key == "pass_env" and isinstance(inner, list):
                    names.update(str(name) for name in inner)
                else:
                    walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for config in configs:
        walk(config)
    return {name: os.environ[name] for name in sorted(names) if name in os.environ}


def _offered(nodes: list[dict[str, float]]) -> str:
    kinds = sorted(
        {
            k
            for node in nodes
            for k in node
            if not k.startswith("node:") and k != "object_store_memory"
        }
    )
    return f"{len(nodes)} nodes with {', '.join(kinds)}" if nodes else "no live node"


def _first_line(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else type(error).__name__
