"""The contract every check follows: parameters in, `{passed, score, reason}` out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from benchyard.runner.trajectory import Event
    from benchyard.spec.models import Scenario


class CheckParams(BaseModel):
    """Base of a check type's parameter model; unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    score: float
    reason: str

    @classmethod
    def of(cls, passed: bool, reason: str) -> CheckResult:
        return cls(passed=passed, score=1.0 if passed else 0.0, reason=reason)


@dataclass(frozen=True)
class Evidence:
    """What an attempt produced, as the checks see it."""

    answer: str
    scenario: Scenario
    answers: list[str] = field(default_factory=list)
    trajectory: list[Event] = field(default_factory=list)
    workdir: Path | None = None


class CheckFailedToRun(Exception):
    """A check could not be evaluated for a reason outside the agent's answer (infrastructure)."""
