"""The root_cause check: its verdict, score and details, and the judge mode's disagreements."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from benchyard.checks.base import CheckResult, Evidence
from benchyard.runner.failures import AttemptFailure
from benchyard.runner.grading import run_check
from benchyard.runner.trajectory import Event
from benchyard.spec.models import CheckSpec, Scenario

TRUTH = {"entities": [{"kind": "ConfigMap", "name": "flagd-config", "namespace": "otel-demo"}]}


def answer(*entities: tuple[str, str, str], confidence: float | None = None) -> str:
    data: dict[str, Any] = {
        "root_causes": [{"kind": k, "name": n, "namespace": ns} for k, n, ns in entities]
    }
    if confidence is not None:
        data["confidence"] = confidence
    return json.dumps(data)


class StubJudge:
    """Stands in for the judge model: replies with what the test scripted, records the prompt."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.prompts: list[str] = []

    async def verdict(
        self,
        messages: list[dict[str, Any]],
        parse: Callable[[str], Any],
        sink: list[Event],
        label: str,
    ) -> Any:
        self.prompts.append(messages[-1]["content"])
        return parse(self.reply)


async def grade(text: str, model: Any = None, **params: Any) -> CheckResult:
    spec = CheckSpec.model_validate({"type": "root_cause", **TRUTH, **params})
    scenario = Scenario.model_validate(
        {"id": "s", "stimulus": "x", "checks": [spec.model_dump(exclude_none=True)]}
    )
    return await run_check(
        spec, Evidence(answer=text, scenario=scenario, answers=[text], judge=model)
    )


async def test_right_answer_passes_with_its_figures() -> None:
    result = await grade(answer(("ConfigMap", "flagd-config", "otel-demo")))
    assert result.passed and result.score == 1.0
    assert result.details is not None
    assert {
        k: result.details[k]
        for k in ("predicted", "correct", "false_positives", "precision", "recall", "f1")
    } == {
        "predicted": 1,
        "correct": 1,
        "false_positives": 0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
    }


async def test_a_wrong_extra_beside_the_right_one_fails_strictly() -> None:
    """Hedging is not rewarded (issue 22, item 8): the check used to pass a precision of 0.5 by
    default; every named root cause must now be right. The lenient rule's verdict is kept."""
    result = await grade(
        answer(("ConfigMap", "flagd-config", "otel-demo"), ("Deployment", "cart", "otel-demo"))
    )
    assert not result.passed
    assert result.details and result.details["lenient_passed"] is True
    assert result.details["false_positives"] == 1
    assert result.details["false_positive_entities"] == ["Deployment/otel-demo/cart"]
    assert "false positives: Deployment/otel-demo/cart" in result.reason


async def test_two_wrong_extras_fail() -> None:
    result = await grade(
        answer(
            ("ConfigMap", "flagd-config", "otel-demo"),
            ("Deployment", "cart", "otel-demo"),
            ("Service", "cart", "otel-demo"),
        )
    )
    assert not result.passed
    assert "needs recall >= 1 and precision >= 1" in result.reason
    assert result.details and result.details["lenient_passed"] is False


async def test_thresholds_are_parameters() -> None:
    extra = answer(("ConfigMap", "flagd-config", "otel-demo"), ("Deployment", "cart", "otel-demo"))
    assert not (await grade(extra)).passed
    assert (await grade(extra, min_precision=0.5)).passed
    assert not (await grade(answer(), min_recall=0.0)).passed  # one true root cause, at least


async def test_unreadable_answer_fails_without_false_positives() -> None:
    result = await grade("it is the flag config")
    assert not result.passed and result.score == 0.0
    assert (
        result.details
        and result.details["predicted"] == 0
        and result.details["false_positives"] == 0
    )
    assert result.details["unreadable"]


async def test_low_confidence_is_marked() -> None:
    result = await grade(answer(("ConfigMap", "flagd-config", "otel-demo"), confidence=0.3))
    assert result.details and result.details["low_confidence"] is True
    confident = await grade(answer(("ConfigMap", "flagd-config", "otel-demo"), confidence=0.9))
    assert confident.details and confident.details["low_confidence"] is False


async def test_negate_keeps_the_details() -> None:
    spec = CheckSpec.model_validate({"type": "root_cause", **TRUTH, "negate": True})
    scenario = Scenario.model_validate(
        {"id": "s", "stimulus": "x", "checks": [{"type": "root_cause", **TRUTH}]}
    )
    text = answer(("ConfigMap", "flagd-config", "otel-demo"))
    result = await run_check(spec, Evidence(answer=text, scenario=scenario, answers=[text]))
    assert not result.passed and result.details and result.details["f1"] == 1.0


async def test_judge_also_reports_a_disagreement() -> None:
    """The agent names the flagd Deployment: the deterministic match says no, this judge says
    yes; the deterministic verdict stands and the disagreement is recorded."""
    judge = StubJudge(
        '{"predictions": [{"entity": "Deployment/otel-demo/flagd", "matches": 1}],'
        ' "explanation": "flagd serves the flags"}'
    )
    result = await grade(answer(("Deployment", "flagd", "otel-demo")), model=judge, judge="also")
    assert not result.passed
    assert result.details and result.details["disagreement"] is True
    assert result.details["judge"]["passed"] is True and result.details["judge"]["precision"] == 1.0
    assert "judge disagrees" in result.reason
    assert "ConfigMap/otel-demo/flagd-config" in judge.prompts[0]


async def test_judge_only_decides() -> None:
    judge = StubJudge(
        '{"predictions": [{"entity": "x", "matches": null}], "explanation": "wrong object"}'
    )
    result = await grade(
        answer(("ConfigMap", "flagd-config", "otel-demo")), model=judge, judge="only"
    )
    assert not result.passed
    assert (
        result.details
        and result.details["mode"] == "judge"
        and result.details["disagreement"] is True
    )


async def test_judge_mode_without_a_judge_is_an_infrastructure_error() -> None:
    with pytest.raises(AttemptFailure, match="needs a judge model"):
        await grade(answer(("ConfigMap", "flagd-config", "otel-demo")), judge="also")


async def test_a_judge_reply_out_of_range_is_unreadable() -> None:
    from benchyard.sre.judging import parse_reply

    with pytest.raises(ValueError, match=r"must be null or 1\.\.1"):
        parse_reply('{"predictions": [{"matches": 3}]}', 1)
