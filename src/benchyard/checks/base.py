"""The contract every check follows: parameters in, `{passed, score, reason}` out."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from benchyard.runner.patches import FileChange

if TYPE_CHECKING:
    from benchyard.runner.trajectory import Event
    from benchyard.sandbox.process import ProcessOutcome
    from benchyard.spec.models import Scenario


class CheckParams(BaseModel):
    """Base of a check type's parameter model; unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def benchmark_files(self) -> dict[str, str]:
        """Files of the benchmark this check reads, by parameter name, relative to the scenario
        file (a `python` grader); the loader checks them as it checks fixture sources."""
        return {}

    def benchmark_file_problem(self, name: str, path: Path) -> str | None:
        """What is wrong with the file that parameter `name` names, found at `path` inside the
        benchmark; None when it will do. Called by the loader, so `validate` reports it."""
        return None


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    score: float
    reason: str
    details: dict[str, Any] | None = None  # structured figures for reports (JSON), if any

    @classmethod
    def of(cls, passed: bool, reason: str) -> CheckResult:
        return cls(passed=passed, score=1.0 if passed else 0.0, reason=reason)


T = TypeVar("T")


class Judge(Protocol):
    """The run's judge model as the checks see it: the runner passes one in (providers/judge.py's
    `Judge`), so that checks never import the providers."""

    async def verdict(
        self,
        messages: list[dict[str, Any]],
        parse: Callable[[str], T],
        sink: list[Event],
        label: str,
    ) -> T:
        """Ask the judge and read its reply with `parse` (which raises ValueError for a reply it
        cannot read); the judge's calls go to `sink`, marked with `label`."""
        ...


@dataclass(frozen=True)
class Evidence:
    """What an attempt produced, as the checks see it."""

    answer: str
    scenario: Scenario
    answers: list[str] = field(default_factory=list)
    trajectory: list[Event] = field(default_factory=list)
    workdir: Path | None = None
    code: CodeWorkspace | None = None  # checks registered with needs_code=True get one
    judge: Judge | None = None  # the run's judge model, for llm_rubric and reference_match


class CodeWorkspace(Protocol):
    """What a code check sees: the agent's patch and a fresh verification workdir (the pristine
    fixtures, the patch applied, then the verification-only fixtures), private to the check."""

    patch: str  # the agent's change as a git unified diff ("" when it changed nothing)
    patch_error: str | None  # why the patch was refused or did not apply; None when applied
    changes: tuple[FileChange, ...]
    workdir: Path
    io_dir: Path  # a scratch directory outside the workdir, reachable from the sandbox
    scenario_dir: Path  # the scenario file's directory (host only), for CheckParams.benchmark_files

    async def run(
        self, argv: Sequence[str], *, timeout_sec: float, env: Mapping[str, str] | None = None
    ) -> ProcessOutcome:
        """Run `argv` in a fresh sandbox of the run's kind, with the workdir as its cwd."""
        ...

    def write_file(self, relative: str, text: str) -> Path:
        """Write a file into the workdir, replacing what the patch left there (links not followed)."""
        ...


class CheckFailedToRun(Exception):
    """A check could not be evaluated for a reason outside the agent's answer (infrastructure)."""
