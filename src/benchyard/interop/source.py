"""What every export reads: the run, its final attempts with their trajectories, and the
scenarios of its benchmark when the benchmark still loads (for the input and the target)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from benchyard.errors import BenchyardError
from benchyard.runner.trajectory import Event, is_judge
from benchyard.spec.models import Scenario
from benchyard.store.records import AttemptRecord, RunRecord
from benchyard.store.store import Store


class ExportRefused(BenchyardError):
    """A run that cannot be written in the format asked."""


@dataclass(frozen=True)
class RunSource:
    run: RunRecord
    attempts: list[AttemptRecord]  # final attempts, with trajectories, by scenario and epoch
    scenarios: dict[str, Scenario]  # empty when the benchmark no longer loads

    @classmethod
    def read(cls, store: Store, run: RunRecord) -> RunSource:
        if run.kind != "benchmark":
            raise ExportRefused(f"run {run.id[:8]} is a {run.kind} run: it has no attempts")
        attempts = store.attempts(run.id, with_evidence=True)
        return cls(run, attempts, _scenarios(run))

    def model(self) -> str:
        """The model the run's agent called, where its configuration (or its model bridge's)
        names one."""
        config = self.run.agent_config
        bridge = config.get("bridge")
        model = config.get("model") or (bridge.get("model") if isinstance(bridge, dict) else None)
        return str(model) if isinstance(model, str) and model else self.run.agent_name

    def input_text(self, attempt: AttemptRecord) -> str:
        scenario = self.scenarios.get(attempt.scenario_id)
        if scenario is not None:
            return scenario.stimulus.turns[0]
        first = next(
            (e for e in attempt.trajectory or [] if e.kind == "message" and e.role == "user"), None
        )
        return first.content if first is not None else ""

    def tools(self) -> dict[str, list[dict[str, Any]]]:
        """The tools the `openai` agent offers its model in each scenario (its fixture tools and
        its environment's), as OpenAI-compatible function definitions, by scenario id; none when
        the benchmark no longer loads."""
        from benchyard.agents.toolbox import ToolBox

        return {
            scenario_id: [
                tool["function"] for tool in ToolBox.for_scenario(scenario, []).definitions()
            ]
            for scenario_id, scenario in self.scenarios.items()
        }

    def target(self, attempt: AttemptRecord) -> str:
        scenario = self.scenarios.get(attempt.scenario_id)
        answers = scenario.reference_answers() if scenario is not None else None
        return answers[-1] if answers else ""


def _scenarios(run: RunRecord) -> dict[str, Scenario]:
    from benchyard.benchmarks.loader import load_benchmark

    try:
        loaded = load_benchmark(run.benchmark_path)
    except BenchyardError:
        return {}
    return {scenario.id: scenario for scenario in loaded.scenarios}


def agent_events(attempt: AttemptRecord) -> Iterator[Event]:
    """The trajectory's events without the judge's calls (those are the grader's, not the agent's)."""
    for event in attempt.trajectory or []:
        if not is_judge(event):
            yield event


def iso(moment: datetime | float | None) -> str | None:
    if moment is None:
        return None
    if isinstance(moment, int | float):
        moment = datetime.fromtimestamp(moment, UTC)
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def call_arguments(arguments: Any) -> dict[str, Any]:
    """A tool call's arguments as an object: as given, or the model's JSON text read ({} when it
    is not an object)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return {}
    return arguments if isinstance(arguments, dict) else {}


def check_rows(attempt: AttemptRecord) -> list[dict[str, Any]]:
    return [
        {
            "label": check.label,
            "type": check.check_type,
            "passed": check.passed,
            "score": check.score,
            "weight": check.weight,
            "reason": check.reason,
        }
        for check in attempt.checks
    ]
