"""Grading validates a check's parameters once per check spec, and keeps only the latest specs: a
run reads its scenarios again from their lines (spec/scenario_index.py), new specs each time, so a
cache of every spec it graded would grow with the run."""

from __future__ import annotations

import asyncio
import gc
import weakref

from benchyard.runner.grading import PARAMS_KEPT, grade
from benchyard.spec.models import CheckSpec, Scenario


def _scenario(number: int) -> Scenario:
    return Scenario.model_validate(
        {"id": f"s{number}", "stimulus": "q", "checks": [{"type": "equals", "value": str(number)}]}
    )


async def _grade_each(scenarios: list[Scenario]) -> list[bool]:
    return [(await grade(s, [s.id[1:]], [], None)).passed for s in scenarios]


def test_a_spec_graded_long_ago_is_not_kept_alive() -> None:
    first = _scenario(0)
    graded: weakref.ref[CheckSpec] = weakref.ref(first.checks[0])
    later = (_scenario(number) for number in range(1, PARAMS_KEPT + 1))
    assert asyncio.run(_grade_each([first])) == [True]
    del first
    for scenario in later:  # each one dropped once graded, as a run drops what it read
        assert asyncio.run(_grade_each([scenario])) == [True]
    gc.collect()
    assert graded() is None


def test_a_spec_graded_again_grades_the_same() -> None:
    scenario = _scenario(7)
    wrong = scenario.model_copy(update={"id": "s8"})  # the same spec object, another answer
    assert asyncio.run(_grade_each([scenario, wrong, scenario])) == [True, False, True]
