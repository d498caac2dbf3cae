"""Choosing what to run: the scenarios selected (spec/filters.py), a limit, and epochs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from benchyard.spec.models import Scenario
from benchyard.spec.scenario_index import fields_of


@dataclass(frozen=True, slots=True)
class PlannedAttempt:
    scenario: Scenario
    epoch: int


class Plan(Sequence[PlannedAttempt]):
    """The attempts of a run in order: every chosen scenario, epoch after epoch. Each attempt is
    made when it is read, so a plan of 100,000 attempts holds its scenarios once, not an object
    per attempt."""

    __slots__ = ("epochs", "scenarios")

    def __init__(self, scenarios: Sequence[Scenario], epochs: int) -> None:
        self.scenarios = scenarios
        self.epochs = epochs

    def __len__(self) -> int:
        return len(self.scenarios) * self.epochs

    @overload
    def __getitem__(self, index: int) -> PlannedAttempt: ...
    @overload
    def __getitem__(self, index: slice) -> list[PlannedAttempt]: ...
    def __getitem__(self, index: int | slice) -> PlannedAttempt | list[PlannedAttempt]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(f"attempt {index} of a plan of {len(self)}")
        epoch, position = divmod(index % len(self), len(self.scenarios))
        return PlannedAttempt(self.scenarios[position], epoch + 1)

    def __iter__(self) -> Iterator[PlannedAttempt]:
        for epoch in range(1, self.epochs + 1):
            for scenario in self.scenarios:
                yield PlannedAttempt(scenario, epoch)


def planned_ids(plan: Sequence[PlannedAttempt]) -> Iterator[tuple[str, int]]:
    """Each planned attempt's scenario id and epoch, in order; of a Plan, without reading its
    scenarios (a ScenarioIndex's ids are in its index: spec/scenario_index.py)."""
    if not isinstance(plan, Plan):
        yield from ((planned.scenario.id, planned.epoch) for planned in plan)
        return
    for epoch in range(1, plan.epochs + 1):
        for chosen in fields_of(plan.scenarios):
            yield chosen.id, epoch


def planned_scenario_ids(plan: Sequence[PlannedAttempt]) -> set[str]:
    """The ids of the scenarios a plan attempts, in one pass over its scenarios whatever its
    epochs (of a Plan, read from its index as planned_ids reads them)."""
    if not isinstance(plan, Plan):
        return {planned.scenario.id for planned in plan}
    return {chosen.id for chosen in fields_of(plan.scenarios)}


def plan_attempts(
    scenarios: Sequence[Scenario], *, epochs: int = 1, limit: int | None = None
) -> Plan:
    return Plan(scenarios[:limit] if limit is not None else scenarios, epochs)
