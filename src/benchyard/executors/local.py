"""The local executor: every try runs in the worker's own process, on this machine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchyard.executors.base import DEFAULT_LANES, ExecutorOptions
from benchyard.runner.execute import ProposedRun, RunContext, _AttemptExecutor
from benchyard.runner.failures import AttemptFailure
from benchyard.runner.plan import PlannedAttempt
from benchyard.runner.provenance import host_name
from benchyard.store.records import AttemptRecord

if TYPE_CHECKING:
    pass


class LocalExecutor:
    name = "local"

    def lanes(self, asked: int | None) -> int:
        return asked or DEFAULT_LANES

    def check(self, run: ProposedRun) -> None:
        from benchyard.runner.isolation import open_sandbox

        open_sandbox(run.settings, run.benchmark, run.agent, run.store_url, run.scenarios)

    def attempts(self, context: RunContext) -> _AttemptExecutor:
        return LocalAttempts(context)

    def close(self) -> None:
        pass


class LocalAttempts(_AttemptExecutor):
    """A run's tries in this process, each recorded with this machine as its node."""

    node = host_name()

    async def one_try(
        self, planned: PlannedAttempt, try_number: int
    ) -> tuple[AttemptRecord, AttemptFailure | None]:
        record, failure = await super().one_try(planned, try_number)
        record.node = self.node
        return record, failure


def open_local(options: ExecutorOptions) -> LocalExecutor:
    return LocalExecutor()
