"""Selecting scenarios by filters (`--filter`, a profile's `filters:`): by category, tag, id or
difficulty, shell-style patterns; alternatives for one key OR-ed, different keys AND-ed."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import TYPE_CHECKING

from benchyard.errors import BenchyardError

if TYPE_CHECKING:
    from benchyard.spec.models import Scenario

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
