"""Two-phase attempts for coding scenarios.

Phase one: the agent works in its workdir, which holds the pristine fixtures; a git snapshot of
them is taken first, outside the workdir, unless every code check of the scenario grades the
answer alone (`reads_change=False`: code_exec, humaneval, mbpp), which then needs neither snapshot
nor patch (six git processes an attempt saved) and keeps none. Phase two: the agent's change is
collected as a patch, and each code check grades it in a verification workspace of its own, built fresh from the
pristine fixtures with the patch applied and the verification-only fixtures (hidden tests) copied
over it, and run in a fresh sandbox of the run's kind. The agent never sees the hidden files and
cannot tamper with the tests that grade it.

```
scratch/verify/<attempt id>/
├── git/            the snapshot's git directory
└── <n>/work, <n>/io   the workspace of the n-th code check
```
"""

from __future__ import annotations

import functools
import itertools
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from benchyard.agents.base import Agent, AgentResult, AgentTask
from benchyard.agents.oracle import apply_reference_change
from benchyard.checks.registry import get_check_type
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.grading import Grade, grade
from benchyard.runner.patches import (
    FileChange,
    GitFailed,
    Patch,
    Snapshot,
    apply_patch,
    take_snapshot,
)
from benchyard.runner.scratch import ScratchSandbox
from benchyard.runner.trajectory import Event
from benchyard.runner.workdir import (
    copy_fixtures,
    fresh_target,
    prepare_dirs,
)
from benchyard.sandbox.base import SYSTEM_PATH, Sandbox
from benchyard.sandbox.identity import sandbox_user
from benchyard.sandbox.process import ProcessOutcome
from benchyard.spec.models import Scenario
from benchyard.untrusted import remove_tree

if TYPE_CHECKING:
    from benchyard.providers.judge import Judge

VERIFY_ENV = {
    "PATH": SYSTEM_PATH,
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
    "PYTHONNOUSERSITE": "1",  # HOME is the workdir: no site-packages of the model's there
}
"""The whole environment of a verification command: nothing of benchyard's own leaks in."""


def needs_two_phase(scenario: Scenario) -> bool:
    """A scenario is graded in two phases when one of its checks runs code."""
    for spec in scenario.checks:
        check_type = get_check_type(spec.type)
        if check_type is not None and check_type.needs_code:
            return True
    return False


def reads_change(scenario: Scenario) -> bool:
    """Whether a code check of the scenario grades the agent's change to its workdir (so that the
    change must be collected as a patch), rather than the answer alone."""
    for spec in scenario.checks:
        check_type = get_check_type(spec.type)
        if check_type is not None and check_type.needs_code and check_type.reads_change:
            return True
    return False


@dataclass
class Workspace:
    """One code check's verification workdir and sandbox (implements checks.base.CodeWorkspace)."""

    patch: str
    patch_error: str | None
    changes: tuple[FileChange, ...]
    workdir: Path
    io_dir: Path
    sandbox: Sandbox
    output_cap_bytes: int
    scenario_dir: Path

    async def run(
        self, argv: Sequence[str], *, timeout_sec: float, env: Mapping[str, str] | None = None
    ) -> ProcessOutcome:
        return await self.sandbox.run(
            list(argv),
            workdir=self.workdir,
            io_dir=self.io_dir,
            env={**VERIFY_ENV, "HOME": str(self.workdir), **(env or {})},
            timeout_sec=timeout_sec,
            output_cap_bytes=self.output_cap_bytes,
        )

    def write_file(self, relative: str, text: str) -> Path:
        target = fresh_target(self.workdir, relative)
        target.write_text(text, encoding="utf-8")
        return target


@dataclass
class CodingAttempt:
    """The two phases of one attempt at a coding scenario, around the agent's run: `start` (the
    snapshot of the pristine workdir) before the agent runs, `collect` after it."""

    scenario: Scenario
    scenario_dir: Path
    workdir: Path
    root: Path  # this attempt's verification directory, removed by `remove`
    sandbox: Sandbox
    output_cap_bytes: int
    snapshot: Snapshot | None = None
    patch: Patch | None = None
    _numbers: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    async def start(self) -> CodingAttempt:
        """Snapshot the pristine workdir, when a check reads the change; call before the agent
        runs."""
        try:
            self.root.mkdir(parents=True)
        except OSError as error:
            raise AttemptFailure(
                FailureKind.SANDBOX_START, f"could not prepare the verification directory: {error}"
            ) from error
        if reads_change(self.scenario):
            self.snapshot = await take_snapshot(self.workdir, self.root / "git")
        return self

    async def collect(self) -> Patch:
        """The agent's change as a patch (collected once, after the agent's run); an empty one
        when no check reads it (no snapshot was taken)."""
        if self.patch is None:
            self.patch = await self.snapshot.diff() if self.snapshot else Patch("", ())
        return self.patch

    @asynccontextmanager
    async def open_workspace(self) -> AsyncIterator[Workspace]:
        """A fresh verification workspace: pristine fixtures, the patch, the verification fixtures."""
        patch = await self.collect()
        base = self.root / str(next(self._numbers))
        workdir, io_dir = base / "work", base / "io"
        try:
            error = await self._build(workdir, io_dir, patch)
            yield Workspace(
                patch.text,
                error,
                patch.changes,
                workdir,
                io_dir,
                self.sandbox,
                self.output_cap_bytes,
                self.scenario_dir,
            )
        finally:
            remove_tree(base, ignore_errors=True)

    async def _build(self, workdir: Path, io_dir: Path, patch: Patch) -> str | None:
        """Fill a verification workdir; the reason the patch was not applied, or None."""
        error = patch.error
        try:
            workdir.mkdir(parents=True)
            io_dir.mkdir()
            copy_fixtures(self.scenario.fixtures.files, self.scenario_dir, workdir)
            if error is None and patch.text:
                try:
                    await apply_patch(patch.text, workdir)
                except GitFailed as failed:
                    error = f"the patch does not apply: {failed}"
            copy_fixtures(self.scenario.fixtures.verification, self.scenario_dir, workdir)
            sandbox_user().hand_over(workdir, io_dir)
        except OSError as failed:
            raise AttemptFailure(
                FailureKind.SANDBOX_START, f"could not build the verification workdir: {failed}"
            ) from failed
        return error

    def stored_patch(self) -> str | None:
        return self.patch.stored() if self.patch and self.snapshot else None

    def remove(self) -> None:
        remove_tree(self.root, ignore_errors=True)


async def run_agent(agent: Agent, task: AgentTask, coding: CodingAttempt | None) -> AgentResult:
    """Run the agent; for a coding scenario, collect its change even when it failed or timed out."""
    try:
        result = await agent.run(task)
    except AttemptFailure:
        if coding is not None:
            await coding.collect()
        raise
    if coding is not None:
        await coding.collect()
    return result


ChangeMaker = Callable[[Path], Awaitable[None]]
"""Writes a change into a coding scenario's pristine workdir (the reference, a recorded patch)."""


class ChangeGrader(ScratchSandbox):
    """Grades a given change to coding scenarios of one benchmark outside a run (`verify`: the
    reference change; a recorded patch could be graded again the same way), through the same two
    phases as an attempt. The scratch directory and the
    sandbox are made on first use (a benchmark without coding scenarios needs neither) and the
    scratch directory is removed on exit."""

    scratch_prefix = "benchyard-grade-"

    async def grade_reference(
        self, scenario: Scenario, answers: list[str], trajectory: list[Event]
    ) -> Grade:
        """The scenario's reference answers and reference change, graded as the oracle's attempt."""
        scenario_dir = self.benchmark.scenario_dir(scenario)
        make_change = functools.partial(apply_reference_change, scenario, scenario_dir)
        return await self.grade(scenario, answers, trajectory, make_change)

    async def grade(
        self,
        scenario: Scenario,
        answers: list[str],
        trajectory: list[Event],
        make_change: ChangeMaker,
        judge: Judge | None = None,
    ) -> Grade:
        """Pristine workdir, `make_change` on it, the patch graded in fresh sandboxes."""
        scratch, sandbox = self._scratch_dir(), self._sandbox_for(scenario)
        scenario_dir = self.benchmark.scenario_dir(scenario)
        name = uuid.uuid4().hex
        try:
            dirs = prepare_dirs(scratch, name, scenario, scenario_dir)
        except OSError as error:
            raise AttemptFailure(
                FailureKind.SANDBOX_START, f"could not prepare the workdir: {error}"
            ) from error
        coding = CodingAttempt(
            scenario,
            scenario_dir,
            dirs.workdir,
            scratch / "verify" / name,
            sandbox,
            self.settings.output_cap_bytes,
        )
        try:
            await coding.start()
            await make_change(dirs.workdir)
            await coding.collect()
            return await grade(
                scenario, answers, trajectory, dirs.workdir, judge, open_code=coding.open_workspace
            )
        finally:
            dirs.remove()
            coding.remove()
