"""The executor interface: where a worker's attempts run.

A worker (runner/worker.py) claims attempts from the queue, holds their leases, and writes each
finished try in the transaction that marks its attempt done; an executor only decides where the
tries themselves run. `local` runs them in the worker's own process; `ray` as tasks on a Ray
cluster, each on the node Ray picks (docs/distributed.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from benchyard.errors import BenchyardError

if TYPE_CHECKING:
    from benchyard.runner.execute import ProposedRun, RunContext, _AttemptExecutor

DEFAULT_LANES = 8  # attempts at once when -j does not say, for an executor that cannot tell


class ExecutorUnavailable(BenchyardError):
    """The executor asked for does not exist, is not installed, or cannot reach its cluster."""


@dataclass(frozen=True)
class ExecutorOptions:
    address: str | None = (
        None  # the cluster to join (`--ray-address`); None: the executor's default
    )
    ship_benchyard: bool = True  # send this benchyard's code to the cluster with the job (ray)
    log: Callable[[str], None] | None = None  # where the worker's log lines go (lost nodes, ...)


class Executor(Protocol):
    @property
    def name(self) -> str:
        """The name `--executor` chooses it by."""
        ...

    def lanes(self, asked: int | None) -> int:
        """Attempts a worker runs at once: `asked` (`-j`) when given, else what it can run."""
        ...

    def check(self, run: ProposedRun) -> None:
        """Refuse, before anything is recorded, a run it cannot execute (a BenchyardError that
        says why: a sandbox that cannot work, unsandboxed code not allowed, resources that no
        machine offers)."""
        ...

    def attempts(self, context: RunContext) -> _AttemptExecutor:
        """What executes one run's attempts for a worker: each try where this executor runs it,
        retries as runner/failures.py says, every try handed to `writer`. Raises a
        BenchyardError when the run cannot execute here (the worker refuses it)."""
        ...

    def close(self) -> None:
        """Let go of what it holds (a cluster connection); a worker calls it once, at the end."""
        ...
