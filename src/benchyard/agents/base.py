"""The agent interface: given a task, produce one answer per user turn and a trajectory."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from benchyard.bridge.ledger import RunTab
from benchyard.runner.trajectory import Event
from benchyard.sandbox.base import Sandbox
from benchyard.spec.models import Scenario


@dataclass(frozen=True)
class AgentTask:
    scenario: Scenario
    attempt_id: str
    workdir: Path | None
    io_dir: Path | None  # the protocol files, outside the workdir
    timeout_sec: float
    max_turns: int
    output_cap_bytes: int
    sandbox: Sandbox
    scenario_dir: Path | None = None  # the scenario file's directory (fixture sources, references)
    run_spend: RunTab | None = None  # the run's spend under its --budget, for a model bridge


@dataclass
class Captured:
    """Text kept up to a cap, with the count of bytes dropped past it."""

    text: str = ""
    dropped_bytes: int = 0


@dataclass
class AgentResult:
    answers: list[str] = field(default_factory=list)
    trajectory: list[Event] = field(default_factory=list)
    stdout: Captured = field(default_factory=Captured)
    stderr: Captured = field(default_factory=Captured)
    turns: int = 0
    # the turns are the agent's own report, past max_turns: a review flag, never a failure
    claimed_over_max_turns: bool = False

    @property
    def answer(self) -> str:
        return self.answers[-1] if self.answers else ""


class Agent(Protocol):
    name: str
    needs_workdir: bool

    def describe(self) -> dict[str, Any]:
        """The configuration recorded on the run."""
        ...

    async def run(self, task: AgentTask) -> AgentResult:
        """Answer every user turn; raise AttemptFailure on timeout, crash or infrastructure fault."""
        ...
