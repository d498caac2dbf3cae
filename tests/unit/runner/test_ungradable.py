"""A check that raises on the answer could not grade it: that check fails with the exception as its
reason, and the attempt fails (`ungradable_answer`, counted), whatever `negate`, the other checks
or a threshold say; only a check that says it could not run is an uncounted error."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from benchyard.checks import registry
from benchyard.checks.base import CheckFailedToRun, CheckParams, CheckResult, Evidence
from benchyard.runner.failures import POLICIES, AttemptFailure, FailureKind
from benchyard.runner.grading import Grade, grade
from benchyard.spec.models import Scenario


class NoParams(CheckParams):
    pass


def _raises_on_crash(params: NoParams, evidence: Evidence) -> CheckResult:
    if "crash" in evidence.answer:
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")
    if "no tools" in evidence.answer:
        raise CheckFailedToRun("the scenario's tool server did not answer")
    return CheckResult.of(True, "fine")


@pytest.fixture(autouse=True)
def fragile_check() -> Iterator[None]:
    """A check type, registered for these tests only, that raises on answers saying "crash"."""
    registry.check("fragile", NoParams)(_raises_on_crash)
    yield
    del registry._registry["fragile"]


def _grade(answer: str, *checks: dict[str, Any], **scenario: Any) -> Grade:
    parsed = Scenario.model_validate(
        {"id": "s", "stimulus": "q", "checks": list(checks), **scenario}
    )
    return asyncio.run(grade(parsed, [answer], [], None))


def test_a_check_that_raises_fails_the_attempt_with_its_reason() -> None:
    graded = _grade("crash", {"type": "fragile"}, {"type": "contains", "value": "crash"})
    assert not graded.passed
    assert graded.failure_kind == FailureKind.UNGRADABLE_ANSWER.value
    assert graded.cause is not None
    assert "could not grade the answer: fragile raised ValueError: Exceeds the limit" in (
        graded.cause
    )
    fragile, contains = graded.checks
    assert (fragile.passed, fragile.score, contains.passed) == (False, 0.0, True)
    policy = POLICIES[FailureKind.UNGRADABLE_ANSWER]
    assert (policy.counts, policy.verdict, policy.retry) == (True, "failed", False)


def test_negate_does_not_turn_an_ungradable_answer_into_a_pass() -> None:
    graded = _grade("crash", {"type": "fragile", "negate": True})
    assert not graded.passed
    assert graded.checks[0].passed is False
    assert graded.failure_kind == FailureKind.UNGRADABLE_ANSWER.value


def test_a_threshold_the_other_checks_reach_does_not_rescue_it() -> None:
    checks: list[dict[str, Any]] = [
        {"type": "contains", "value": "crash", "weight": 9},
        {"type": "fragile"},
    ]
    graded = _grade("crash", *checks, threshold=0.5)
    assert not graded.passed
    assert graded.score == pytest.approx(0.9)
    assert graded.failure_kind == FailureKind.UNGRADABLE_ANSWER.value


def test_a_check_of_weight_zero_fails_alone() -> None:
    graded = _grade("crash", {"type": "fragile", "weight": 0}, {"type": "contains", "value": "c"})
    assert graded.passed and graded.failure_kind is None
    assert graded.checks[0].passed is False


def test_a_check_that_says_it_could_not_run_is_an_uncounted_error() -> None:
    with pytest.raises(AttemptFailure) as failure:
        _grade("no tools", {"type": "fragile"})
    assert failure.value.kind == FailureKind.CHECK_ERROR
    assert (failure.value.policy.counts, failure.value.policy.verdict) == (False, "error")


def test_an_answer_it_can_grade_is_graded_as_before() -> None:
    graded = _grade("fine answer", {"type": "fragile"})
    assert graded.passed and graded.failure_kind is None and graded.cause is None
