"""The oracle agent: replays each scenario's reference, so a benchmark can be checked against itself."""

from __future__ import annotations

from typing import Any

from benchyard.agents.base import AgentResult, AgentTask
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import message


class OracleAgent:
    needs_workdir = False

    def __init__(self, name: str = "oracle") -> None:
        self.name = name

    def describe(self) -> dict[str, Any]:
        return {"kind": "oracle"}

    async def run(self, task: AgentTask) -> AgentResult:
        answers = task.scenario.reference_answers()
        if answers is None:
            raise AttemptFailure(
                FailureKind.MISSING_REFERENCE, f"scenario '{task.scenario.id}' has no reference"
            )
        result = AgentResult(answers=answers, turns=len(answers))
        for turn, answer in zip(task.scenario.stimulus.turns, answers, strict=True):
            result.trajectory.append(message("user", turn))
            result.trajectory.append(message("assistant", answer))
        return result
