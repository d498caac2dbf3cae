"""What runs on the Ray nodes: one try of an attempt, as a Ray task (`run_try`).

The task first says where it runs (`Started`, so that the worker can show the node while the
attempt is in flight), then runs the try exactly as a local worker would (runner/execute.py's
`one_try`: workdir, sandbox, agent, grading, evidence) and gives back its record (`Finished`).
It never touches the store: the worker that holds the attempt's claim writes the record, in the
transaction that marks the attempt done.

Each Ray worker process keeps, per run, what the try needs (the benchmark unpacked and checked
against its content hash, the agent rebuilt from its recorded configuration with its code where
this node unpacked it, the sandbox opened on this node) and one event loop in a thread of its
own, so that agents' and judges' connections outlive a try. A cancelled task (the run was
cancelled, the worker stopped) stops its try as a local worker does: the sandbox is killed, the
workdir removed.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import socket
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Coroutine, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from benchyard import secrets
from benchyard.agents.base import Agent
from benchyard.agents.registry import build_agent
from benchyard.benchmarks.loader import load_benchmark
from benchyard.errors import BenchyardError
from benchyard.executors.ray.shipping import (
    ShippingError,
    forget_unused,
    only_entry,
    relocated_agent_config,
    unpacked,
)
from benchyard.providers.judge import build_judge
from benchyard.runner.execute import RunSettings, _AttemptExecutor, default_work_root
from benchyard.runner.failures import FailureKind
from benchyard.runner.isolation import egress_for, open_sandbox
from benchyard.runner.loop import new_event_loop, raise_open_files_limit
from benchyard.runner.plan import PlannedAttempt
from benchyard.runner.recorded import recorded_settings
from benchyard.runner.run_scratch import SCRATCH_OWNER, SCRATCH_PREFIX, pid_alive
from benchyard.runner.workdir import make_scratch_layout
from benchyard.spec.loader import Benchmark
from benchyard.spec.models import Scenario
from benchyard.store.records import AttemptRecord, RunRecord
from benchyard.untrusted import remove_tree

T = TypeVar("T")
CANCEL_POLL_SEC = 0.1  # how often a running try looks whether its task was cancelled
STOP_GRACE_SEC = 20.0  # how long a cancelled try may take to stop its sandbox and clean up
KEPT_RUNS = 4  # runs whose agent, sandbox and scratch a Ray worker process keeps at once
NODE_CHARS = 200  # what the store keeps of a node's name


# ---- what travels between the worker and a node -------------------------------------------------


@dataclass(frozen=True)
class Shipped:
    """A bundle (executors/ray/shipping.py): its hash, and a Ray reference to its bytes that a
    node dereferences only when it has not unpacked that hash yet."""

    sha256: str
    ref: Any


@dataclass(frozen=True)
class ShippedCode:
    original: str  # the path the agent's command names on the worker's machine
    bundle: Shipped


@dataclass(frozen=True)
class RunSpec:
    """A run as its tries need it on a node; put in the object store once per run."""

    run: RunRecord  # its agent configuration and settings are the recorded ones, secrets scrubbed
    scenario_ids: tuple[str, ...] | None  # those the run executes (its sandbox is checked for them)
    benchmark: Shipped
    code: tuple[ShippedCode, ...]
    env: dict[str, str]  # the variables its agent and judge name (API keys), from the worker
    store_url: str | None  # as it may be shown, without its password: only refused, sealed


@dataclass(frozen=True)
class Started:
    node: str


@dataclass(frozen=True)
class Finished:
    record: AttemptRecord
    failure: tuple[FailureKind, str] | None  # the failure's kind and message, when it failed


@dataclass(frozen=True)
class Unready:
    """The node could not prepare the run (its sandbox cannot work there, a bundle did not
    arrive whole): the worker records the try as an infrastructure fault, retried."""

    node: str
    message: str


class NodeUnready(BenchyardError):
    pass


# ---- the task -----------------------------------------------------------------------------------


def run_try(
    box: list[Any], scenario_id: str, epoch: int, try_number: int
) -> Iterator[Started | Finished | Unready]:
    """One try of attempt (`scenario_id`, `epoch`) of the run in `box` (a one-item list, so that
    Ray passes the reference itself instead of fetching the spec for every task)."""
    state = node_state()
    yield Started(state.node)
    try:
        tries = state.tries_for(box[0])
        planned = PlannedAttempt(tries.scenario(scenario_id), epoch)
        state.apply_env(tries.env)
        record, failure = state.run(tries.one_try(planned, try_number))
    except NodeUnready as error:
        yield Unready(state.node, f"Ray node {state.node}: {error}")
        return
    except (_Cancelled, KeyboardInterrupt):
        return  # cancelled: the worker reads a TaskCancelledError, whatever is yielded now
    record.node = state.node
    yield Finished(record, (failure.kind, failure.message) if failure else None)


# ---- one run's tries on this node ---------------------------------------------------------------


class NodeTries(_AttemptExecutor):
    """A run's tries on this node: runner/execute.py's `one_try` as a local worker runs it, with
    the sandbox and judge opened here. It writes nothing (`attempt_with_retries` is the worker's),
    so it has no writer or observer."""

    def __init__(
        self,
        spec: RunSpec,
        benchmark: Benchmark,
        agent: Agent,
        settings: RunSettings,
        scratch: Path,
    ) -> None:
        # not _AttemptExecutor.__init__: that opens the sandbox with the worker's store
        self.benchmark = benchmark
        self.agent = agent
        self.run = spec.run
        self.settings = settings
        self.scratch = scratch
        self.env = spec.env
        self.by_id = {scenario.id: scenario for scenario in benchmark.scenarios}
        chosen = (
            None
            if spec.scenario_ids is None
            else [self.by_id[sid] for sid in spec.scenario_ids if sid in self.by_id]
        )
        self.sandbox = open_sandbox(settings, benchmark, agent, spec.store_url, chosen)
        self.egress = egress_for(settings, spec.store_url)
        self.judge = build_judge(settings.judge)

    def scenario(self, scenario_id: str) -> Scenario:
        found = self.by_id.get(scenario_id)
        if found is None:
            raise NodeUnready(f"the benchmark shipped has no scenario '{scenario_id}'")
        return found


class _Cancelled(Exception):
    pass


class NodeState:
    """What one Ray worker process keeps between tasks: its event loop and the runs it served."""

    def __init__(self) -> None:
        raise_open_files_limit()
        self.node = node_name()
        self.work_root = default_work_root()
        self.loop = new_event_loop()
        self._watch_children()
        threading.Thread(target=self.loop.run_forever, name="benchyard-node", daemon=True).start()
        self.runs: OrderedDict[str, NodeTries] = OrderedDict()
        self.benchmarks: dict[str, Benchmark] = {}
        self.applied: set[str] = set()
        remove_dead_scratch(self.work_root)
        with contextlib.suppress(OSError):
            forget_unused()
        atexit.register(self._remove_scratch)

    def _remove_scratch(self) -> None:
        """At exit (a Ray worker let go when idle): no run's scratch is left behind."""
        for tries in self.runs.values():
            if not tries.settings.keep_workdirs:
                remove_tree(tries.scratch, ignore_errors=True)

    def _watch_children(self) -> None:
        """Children waited for through pidfds where the kernel has them (runner/loop.py)."""
        with contextlib.suppress(OSError, NotImplementedError, AttributeError):
            os.close(os.pidfd_open(os.getpid()))
            watcher = asyncio.PidfdChildWatcher()
            watcher.attach_loop(self.loop)  # the loop of this thread, not the main one
            asyncio.set_child_watcher(watcher)

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` on the node's loop; stop it there when the task is cancelled: Ray raises
        KeyboardInterrupt in the task's thread (which would leave the loop's work running) or
        only marks the task."""
        import ray

        ended = threading.Event()

        async def watched() -> T:
            try:
                return await work
            finally:
                ended.set()

        future = asyncio.run_coroutine_threadsafe(watched(), self.loop)
        context = ray.get_runtime_context()
        try:
            while True:
                try:
                    return future.result(timeout=CANCEL_POLL_SEC)
                except concurrent.futures.TimeoutError:
                    if context.is_canceled():
                        raise _Cancelled() from None
        except BaseException:
            if not future.done():
                future.cancel()
                ended.wait(STOP_GRACE_SEC)  # the sandbox killed, the workdir removed
            raise

    def apply_env(self, env: Mapping[str, str]) -> None:
        """The variables this run's agent and judge read (API keys), and no other run's."""
        for name in self.applied - set(env):
            os.environ.pop(name, None)
        os.environ.update(env)
        self.applied = set(env)
        secrets.register(*env.values())

    def tries_for(self, ref: Any) -> NodeTries:
        key = ref.hex()
        found = self.runs.get(key)
        if found is not None:
            self.runs.move_to_end(key)
            return found
        import ray

        spec: RunSpec = ray.get(ref)
        try:
            tries = self._prepare(spec)
        except Exception as error:  # the sandbox cannot work here, a bundle arrived damaged, ...
            raise NodeUnready(str(error) or type(error).__name__) from None
        self.runs[key] = tries
        while len(self.runs) > KEPT_RUNS:
            _, old = self.runs.popitem(last=False)
            self._forget(old)
        return tries

    def _prepare(self, spec: RunSpec) -> NodeTries:
        benchmark = self._benchmark(spec)
        moves = {
            code.original: str(only_entry(_unpacked("code", code.bundle))) for code in spec.code
        }
        self.apply_env(spec.env)
        config = relocated_agent_config(spec.run.agent_config, moves)
        agent = build_agent(spec.run.agent_name, config)
        settings = recorded_settings(spec.run, {"work_root": self.work_root})
        scratch = Path(
            tempfile.mkdtemp(prefix=f"benchyard-{spec.run.id}-{os.getpid()}-", dir=self.work_root)
        )
        make_scratch_layout(scratch)
        try:
            return NodeTries(spec, benchmark, agent, settings, scratch)
        except BaseException:
            remove_tree(scratch, ignore_errors=True)
            raise

    def _benchmark(self, spec: RunSpec) -> Benchmark:
        shipped = spec.benchmark
        found = self.benchmarks.get(shipped.sha256)
        if found is not None:
            return found
        directory = _unpacked("bench", shipped)
        benchmark = load_benchmark(str(only_entry(directory)))
        if benchmark.content_hash != spec.run.benchmark_hash:
            raise ShippingError(
                f"the benchmark shipped for run {spec.run.id[:8]} unpacked as "
                f"{benchmark.content_hash[:19]}, not the run's {spec.run.benchmark_hash[:19]}"
            )
        if len(self.benchmarks) >= KEPT_RUNS:
            self.benchmarks.clear()
        self.benchmarks[shipped.sha256] = benchmark
        return benchmark

    def _forget(self, tries: NodeTries) -> None:
        with contextlib.suppress(BaseException):
            asyncio.run_coroutine_threadsafe(tries.aclose(), self.loop).result(timeout=10)
        if not tries.settings.keep_workdirs:
            remove_tree(tries.scratch, ignore_errors=True)


def _unpacked(kind: str, shipped: Shipped) -> Path:
    import ray

    def fetch() -> bytes:
        data: bytes = ray.get(shipped.ref)
        return data

    return unpacked(kind, shipped.sha256, fetch)


_STATE: NodeState | None = None
_STATE_LOCK = threading.Lock()


def node_state() -> NodeState:
    global _STATE
    with _STATE_LOCK:
        if _STATE is None:
            _STATE = NodeState()
        return _STATE


def node_name() -> str:
    """How attempts name this node: the machine, and the Ray node: its `--node-name` when one
    was given, else `ray-` and the start of its node id."""
    import ray

    node_id = ray.get_runtime_context().get_node_id()
    given = ""
    nodes: Any = ray.nodes  # untyped
    with contextlib.suppress(Exception):
        for node in nodes():
            if node.get("NodeID") == node_id:
                name, address = node.get("NodeName"), node.get("NodeManagerAddress")
                given = str(name) if name and name != address else ""
    return f"{socket.gethostname()}/{given or 'ray-' + node_id[:8]}"[:NODE_CHARS]


def remove_dead_scratch(work_root: str | None) -> None:
    """Remove the run scratch directories of this node's processes that are gone (a Ray worker
    killed with its node's tasks, or by a forced cancel)."""
    root = Path(work_root or tempfile.gettempdir())
    with contextlib.suppress(OSError):
        for entry in root.glob(f"{SCRATCH_PREFIX}*"):
            match = SCRATCH_OWNER.match(entry.name)
            if match and entry.is_dir() and not pid_alive(int(match.group(1))):
                remove_tree(entry, ignore_errors=True)
