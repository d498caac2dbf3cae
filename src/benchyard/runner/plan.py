"""Choosing what to run: filters by category, tag, id or difficulty, a limit, and epochs."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from benchyard.errors import BenchyardError
from benchyard.spec.models import Scenario

FILTER_KEYS = ("category", "tag", "id", "difficulty")


class FilterError(BenchyardError):
    """A --filter that benchyard cannot read."""


@dataclass(frozen=True, slots=True)
class PlannedAttempt:
    scenario: Scenario
    epoch: int


def _parse(expression: str) -> tuple[str | None, str]:
    key, sep, value = expression.partition(":")
    if not sep:
        return None, expression
    if key not in FILTER_KEYS:
        raise FilterError(
            f"unknown filter key '{key}' in '{expression}' (use {', '.join(FILTER_KEYS)})"
        )
    if not value:
        raise FilterError(f"filter '{expression}' has no value")
    return key, value


def _matches(scenario: Scenario, key: str | None, pattern: str) -> bool:
    values: dict[str, list[str]] = {
        "category": [scenario.category],
        "tag": scenario.tags,
        "id": [scenario.id],
        "difficulty": [scenario.difficulty],
    }
    keys = [key] if key else list(FILTER_KEYS)
    return any(fnmatch.fnmatchcase(value, pattern) for k in keys for value in values[k])


def select_scenarios(scenarios: Iterable[Scenario], filters: Iterable[str]) -> list[Scenario]:
    """Keep scenarios matching the filters: alternatives for one key are OR-ed, different keys AND-ed."""
    by_key: dict[str | None, list[str]] = {}
    for expression in filters:
        key, pattern = _parse(expression)
        by_key.setdefault(key, []).append(pattern)
    return [
        scenario
        for scenario in scenarios
        if all(
            any(_matches(scenario, key, p) for p in patterns) for key, patterns in by_key.items()
        )
    ]


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


def plan_attempts(scenarios: list[Scenario], *, epochs: int = 1, limit: int | None = None) -> Plan:
    return Plan(scenarios[:limit] if limit is not None else scenarios, epochs)
