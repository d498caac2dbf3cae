"""Selecting scenarios by filters (`--filter`, a profile's `filters:`): by category, tag, id or
difficulty, shell-style patterns; alternatives for one key OR-ed, different keys AND-ed."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from benchyard.errors import BenchyardError

if TYPE_CHECKING:
    from benchyard.spec.models import Scenario
    from benchyard.spec.scenario_index import ScenarioFields

FILTER_KEYS = ("category", "tag", "id", "difficulty")


class FilterError(BenchyardError):
    """A --filter that benchyard cannot read."""


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


def _matches(scenario: Scenario | ScenarioFields, key: str | None, pattern: str) -> bool:
    values: dict[str, list[str]] = {
        "category": [scenario.category],
        "tag": list(scenario.tags),
        "id": [scenario.id],
        "difficulty": [scenario.difficulty],
    }
    keys = [key] if key else list(FILTER_KEYS)
    return any(fnmatch.fnmatchcase(value, pattern) for k in keys for value in values[k])


def select_scenarios(scenarios: Sequence[Scenario], filters: Iterable[str]) -> Sequence[Scenario]:
    """Keep scenarios matching the filters: alternatives for one key are OR-ed, different keys
    AND-ed; of a ScenarioIndex, without reading them (spec/scenario_index.py)."""
    from benchyard.spec.scenario_index import narrowed

    by_key: dict[str | None, list[str]] = {}
    for expression in filters:
        key, pattern = _parse(expression)
        by_key.setdefault(key, []).append(pattern)
    if not by_key:
        return scenarios
    return narrowed(
        scenarios,
        lambda scenario: all(
            any(_matches(scenario, key, p) for p in patterns) for key, patterns in by_key.items()
        ),
    )
