"""Turning an agent's answers into check results, a score and a verdict.

A check that raises on an answer could not grade it: that check fails, with the exception as its
reason, and so does the attempt (`ungradable_answer`, counted), whatever `negate`, the other
checks or a threshold would say (a check of weight 0, which never counts, fails alone). An answer
built to crash a check must never leave accuracy's denominator. Only a check that says it could
not run (CheckFailedToRun: a missing judge, a sandbox fault) or raises an AttemptFailure of its
own kind is an infrastructure error."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchyard.checks.base import (
    CheckFailedToRun,
    CheckParams,
    CheckResult,
    CodeWorkspace,
    Evidence,
)
from benchyard.checks.registry import CheckType, get_check_type
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import Event
from benchyard.spec.models import CheckSpec, Scenario
from benchyard.store.records import CheckRecord

if TYPE_CHECKING:
    from benchyard.providers.judge import Judge


CodeOpener = Callable[[], AbstractAsyncContextManager[CodeWorkspace]]
"""Builds a fresh verification workspace for one code check (runner/two_phase.py)."""


@dataclass(frozen=True)
class Grade:
    passed: bool
    score: float
    checks: list[CheckRecord]
    cause: str | None
    failure_kind: str | None = None  # ungradable_answer when a check could not grade the answer


UNGRADABLE_PREFIX = "could not grade the answer: "
REASON_ERROR_CHARS = 300


class Ungradable(CheckResult):
    """The result of a check that raised on the answer: failed, and never negated."""


def ungradable(spec: CheckSpec, error: BaseException) -> Ungradable:
    text = " ".join(_error_text(error).split())
    if len(text) > REASON_ERROR_CHARS:
        text = text[:REASON_ERROR_CHARS] + "…"
    reason = f"{UNGRADABLE_PREFIX}{spec.type} raised {type(error).__name__}: {text}"
    return Ungradable(passed=False, score=0.0, reason=reason)


def _error_text(error: BaseException) -> str:
    """An exception's message; one whose own str() fails (a hostile value in it) by its type."""
    try:
        return str(error)
    except Exception:
        return "(its message could not be shown)"


PARAMS_KEPT = 256  # check specs kept validated, the oldest dropped first
_params_cache: dict[int, tuple[CheckSpec, CheckType, CheckParams]] = {}


def _prepared(spec: CheckSpec) -> tuple[CheckType, CheckParams]:
    """The check type and validated parameters of a spec, validated once per spec object while
    it is among the PARAMS_KEPT last validated. Bounded because each entry holds its spec: a run
    reads its scenarios again from their lines (spec/scenario_index.py), each time new specs."""
    cached = _params_cache.get(id(spec))
    if cached is None or cached[0] is not spec:
        check_type = get_check_type(spec.type)
        if check_type is None:
            raise AttemptFailure(
                FailureKind.HARNESS_ERROR, f"check type '{spec.type}' is not installed"
            )
        cached = (spec, check_type, check_type.params.model_validate(spec.params))
        if len(_params_cache) >= PARAMS_KEPT:
            del _params_cache[next(iter(_params_cache))]
        _params_cache[id(spec)] = cached
    return cached[1], cached[2]


async def run_check(spec: CheckSpec, evidence: Evidence) -> CheckResult:
    """Evaluate one check; a check function may be `async def` (judges, code in a sandbox). A
    check that raises on the answer returns an Ungradable result (see the module's docstring)."""
    check_type, params = _prepared(spec)
    try:
        outcome = check_type.evaluate(params, evidence)
        result: CheckResult = await outcome if inspect.isawaitable(outcome) else outcome
        _require_a_result(result)
    except AttemptFailure:
        raise  # a check that knows what its failure means (e.g. an unparseable judge reply)
    except CheckFailedToRun as error:
        raise AttemptFailure(
            FailureKind.CHECK_ERROR, f"check {spec.label} could not run: {error}"
        ) from error
    except Exception as error:  # the answer broke the check: it is not graded as passing
        return ungradable(spec, error)
    if spec.negate:
        return CheckResult(
            not result.passed, 1.0 - result.score, negated_reason(result), result.details
        )
    return result


def _require_a_result(result: object) -> None:
    """A check's result must be a verdict: a CheckResult whose score is a number in [0, 1]."""
    if not isinstance(result, CheckResult):
        raise TypeError(f"the check returned {type(result).__name__}, not a CheckResult")
    if not (isinstance(result.score, int | float) and 0.0 <= result.score <= 1.0):
        raise ValueError(f"the check's score {result.score!r} is not a number in [0, 1]")


def negated_reason(result: CheckResult) -> str:
    """The reason of a check with `negate: true`, from the reason of the check it negates: which
    way it went, so that its constraint is never read as what was required."""
    if result.passed:
        return f"negated: must not hold, but does: {result.reason}"
    return f"negated: must not hold, and does not: {result.reason}"


async def grade(
    scenario: Scenario,
    answers: list[str],
    trajectory: list[Event],
    workdir: Path | None,
    judge: Judge | None = None,
    open_code: CodeOpener | None = None,
) -> Grade:
    """Grade the answers; each check that needs code gets a workspace of its own from `open_code`."""
    records, ungraded = [], []
    for position, spec in enumerate(scenario.checks):
        answer = (
            answers[spec.turn - 1]
            if spec.turn and spec.turn <= len(answers)
            else (answers or [""])[-1]
        )
        evidence = Evidence(
            answer=answer,
            scenario=scenario,
            answers=answers,
            trajectory=trajectory,
            workdir=workdir,
            judge=judge,
        )
        result = await _run_with_code(spec, evidence, open_code)
        record = CheckRecord(
            position,
            spec.type,
            spec.label,
            result.passed,
            result.score,
            spec.weight,
            result.reason,
            _threshold(spec),
            result.details,
        )
        records.append(record)
        if isinstance(result, Ungradable) and spec.weight > 0:  # weight 0: informational only
            ungraded.append(record)
    return _combine(scenario, records, ungraded)


THRESHOLD_PARAMS = ("threshold", "min_score")
"""Parameters that name a check's own pass mark on its score (kept for review flags)."""


def _threshold(spec: CheckSpec) -> float | None:
    _, params = _prepared(spec)
    for name in THRESHOLD_PARAMS:
        value = getattr(params, name, None)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    return None


async def _run_with_code(
    spec: CheckSpec, evidence: Evidence, open_code: CodeOpener | None
) -> CheckResult:
    check_type, _ = _prepared(spec)
    if not check_type.needs_code or open_code is None:
        return await run_check(spec, evidence)
    async with open_code() as code:
        return await run_check(spec, dataclasses.replace(evidence, code=code))


def _combine(scenario: Scenario, records: list[CheckRecord], ungraded: list[CheckRecord]) -> Grade:
    if ungraded:
        return _ungradable(records, ungraded)
    score = _weighted_score(records)
    counted = [record for record in records if record.weight > 0]
    if scenario.threshold is not None:
        passed = score >= scenario.threshold
    else:
        passed = all(record.passed for record in counted)
    failing = [record for record in counted if not record.passed]
    cause = None
    if not passed:
        cause = (
            "; ".join(f"{r.label}: {r.reason}" for r in failing)
            or f"score {score:.2f} below threshold"
        )
        if scenario.threshold is not None:
            cause = f"score {score:.2f} < threshold {scenario.threshold:g}: {cause}"
    return Grade(passed, score, records, cause)


def _ungradable(records: list[CheckRecord], ungraded: list[CheckRecord]) -> Grade:
    """The answer broke a check: failed, whatever the other checks, weights or threshold say."""
    cause = "; ".join(f"{record.label}: {record.reason}" for record in ungraded)
    return Grade(
        False, _weighted_score(records), records, cause, FailureKind.UNGRADABLE_ANSWER.value
    )


def _weighted_score(records: list[CheckRecord]) -> float:
    total_weight = sum(record.weight for record in records)
    score = (sum(r.score * r.weight for r in records) / total_weight) if total_weight else 1.0
    return round(score, 6)
