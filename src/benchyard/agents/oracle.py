"""The oracle agent: replays each scenario's reference, so a benchmark can be checked against itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchyard.agents.base import AgentResult, AgentTask
from benchyard.agents.toolbox import ToolBox
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.patches import apply_patch_or_fail
from benchyard.runner.trajectory import Event, message
from benchyard.runner.workdir import copy_fixtures
from benchyard.spec.models import Scenario
from benchyard.spec.tools import ToolReference


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
        if task.workdir is not None and task.scenario_dir is not None:
            await apply_reference_change(task.scenario, task.scenario_dir, task.workdir)
        return AgentResult(
            answers=answers, trajectory=reference_trajectory(task.scenario), turns=len(answers)
        )


async def apply_reference_change(scenario: Scenario, scenario_dir: Path, workdir: Path) -> None:
    """Write a coding scenario's reference solution into `workdir`: its files, then its patch."""
    change = scenario.reference_change
    if change is None:
        return
    copy_fixtures(change.files, scenario_dir, workdir)
    if change.patch is not None:
        text = (scenario_dir / change.patch).read_text(encoding="utf-8")
        failed = f"the reference patch {change.patch} does not apply"
        await apply_patch_or_fail(text, workdir, FailureKind.MISSING_REFERENCE, failed)


def reference_trajectory(scenario: Scenario) -> list[Event]:
    """The trajectory of the reference solution: each user turn, the reference's tool calls of that
    turn answered from the fixtures, then the reference answer."""
    answers = scenario.reference_answers() or []
    reference = scenario.reference
    calls = reference.tool_calls if isinstance(reference, ToolReference) else []
    events: list[Event] = []
    toolbox = ToolBox.for_scenario(scenario, events)
    last = len(scenario.stimulus.turns)
    for turn, (user_text, answer) in enumerate(
        zip(scenario.stimulus.turns, answers, strict=True), start=1
    ):
        events.append(message("user", user_text))
        toolbox.turn = turn
        for call in calls:
            if (call.turn or last) == turn:
                toolbox.call(call.name, call.arguments)
        events.append(message("assistant", answer))
    return events
