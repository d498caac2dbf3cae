"""The `root_cause` check: did the agent name the incident's root cause(s), and how many wrong
ones did it name on the way?

Deterministic by default (`sre/matching.py`: exact entities; ITBench v1 groups and aliases only
when `v1_groups: true`, since their name filters accept victims: ITBench scenario 1's accept the
frontend-proxy Service for a broken ConfigMap);
`judge: also` asks the run's judge model too, as ITBench's official evaluator does, and records
where the two disagree; `judge: only` lets the judge decide. Either way the check's `details`
hold the figures reports aggregate: predicted, correct and false-positive entities, precision,
recall, F1, the stated confidence.

Strict by default: the attempt passes only when every named root cause is accepted by the ground
truth (`min_precision: 1`) and at least one true root cause is named (besides `min_recall`), so
that naming a wrong entity beside the right one, hedging, is not rewarded. Whether the lenient
rule (every root cause named, at least half of the named ones right: ITBench's reading of a
precision of 0.5) would pass it is recorded too (`lenient_passed`), for the audit's
`accuracy_lenient`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from benchyard.checks.base import CheckFailedToRun, CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check
from benchyard.sre.answer import AnswerShapeError, NotJson, RootCauseAnswer, parse_root_causes
from benchyard.sre.matching import EntitySpec, GroupSpec, MatchResult, RootCauseTruth, match

CHECK_TYPE = "root_cause"
SHOWN = 4
LENIENT_PRECISION = 0.5  # the lenient rule: at most as many wrong root causes named as right


class RootCauseParams(CheckParams):
    entities: list[EntitySpec] = Field(
        default_factory=list, description="The root-cause objects; none for a false alarm."
    )
    groups: list[GroupSpec] = Field(
        default_factory=list, description="ITBench v1 groups: kind, namespace, name filters."
    )
    aliases: list[list[str]] = Field(default_factory=list, description="Sets of group ids.")
    v1_groups: bool = Field(
        default=False,
        description="Accept what the v1 groups and aliases accept beside the entities (their name "
        "filters may accept victims of the fault); groups are the truth when there are no entities.",
    )
    min_recall: float = Field(default=1.0, ge=0, le=1, description="Share of root causes to name.")
    min_precision: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="Share of named entities that must be right (1: every one, the strict rule).",
    )
    judge: Literal["off", "also", "only"] = Field(
        default="off",
        description="also: ask the judge model too and report disagreements; only: it decides.",
    )
    low_confidence: float = Field(
        default=0.5, ge=0, le=1, description="A stated confidence below this flags the attempt."
    )

    @model_validator(mode="after")
    def _truth_is_valid(self) -> RootCauseParams:
        RootCauseTruth(entities=self.entities, groups=self.groups, aliases=self.aliases)
        return self

    @property
    def widened(self) -> bool:
        """Whether v1 groups widen the entities (asked for, and there are entities to widen)."""
        return self.v1_groups and bool(self.entities) and bool(self.groups)

    def truth(self) -> RootCauseTruth:
        """The ground truth the answer is graded against: the entities alone unless `v1_groups`;
        a truth with no entities is its groups (a v1-only truth, or a false alarm's)."""
        if self.entities and not self.v1_groups:
            return RootCauseTruth(entities=self.entities)
        return RootCauseTruth(entities=self.entities, groups=self.groups, aliases=self.aliases)


@check(CHECK_TYPE, RootCauseParams)
async def root_cause(params: RootCauseParams, evidence: Evidence) -> CheckResult:
    """The answer names the incident's root-cause entities (exact, v1 group filters, aliases)."""
    truth = params.truth()
    details: dict[str, Any]
    try:
        parsed: RootCauseAnswer | None = parse_root_causes(evidence.answer)
    except (NotJson, AnswerShapeError) as error:
        parsed = None
        unreadable = str(error)
    if parsed is not None:
        result = match(parsed.entities, truth)
        details = _figures(result, parsed, params)
    else:
        result = None
        details = _unreadable(truth, unreadable)
    passed = details["passed"]
    reason = details["reason"]
    score = details["f1"]
    if params.judge != "off":
        judged = await _judge(params, truth, evidence)
        details["judge"] = judged
        details["disagreement"] = judged["passed"] != details["passed"]
        if params.judge == "only":
            details["mode"] = "judge"
            passed, score = judged["passed"], judged["f1"]
            reason = f"judge: {judged['reason']}; deterministic: {reason}"
        else:
            reason += f"; judge {'agrees' if not details['disagreement'] else 'disagrees'} ({judged['reason']})"
    details.pop("reason")
    return CheckResult(bool(passed), round(float(score), 6), reason, details)


def _figures(
    result: MatchResult, parsed: RootCauseAnswer, params: RootCauseParams
) -> dict[str, Any]:
    named_one = result.slots_found > 0 or not result.slots  # a true root cause, if any
    passed = (
        result.recall >= params.min_recall
        and result.precision >= params.min_precision
        and named_one
    )
    lenient = result.recall >= 1.0 and result.precision >= LENIENT_PRECISION
    wrong = [str(v.entity) for v in result.predictions if not v.correct]
    right = [f"{v.entity} ({v.via})" for v in result.predictions if v.correct]
    missed = [label for label, found in zip(result.slots, result.found, strict=True) if not found]
    parts = [f"named {result.predicted}, {result.correct} right"]
    if right:
        parts.append("right: " + ", ".join(right[:SHOWN]))
    if wrong:
        parts.append("false positives: " + ", ".join(wrong[:SHOWN]))
    if missed:
        parts.append("missed: " + ", ".join(missed[:SHOWN]))
    if not result.slots:
        parts.append("no root cause to find (a false alarm)")
    parts.append(
        f"precision {result.precision:.2f}, recall {result.recall:.2f}, F1 {result.f1:.2f}"
    )
    if parsed.skipped:
        parts.append("unreadable entries: " + "; ".join(parsed.skipped[:2]))
    if not passed:
        parts.append(
            f"needs recall >= {params.min_recall:g} and precision >= {params.min_precision:g}"
            + ("" if named_one else ", and one true root cause named")
        )
    return {
        "mode": "deterministic",
        "passed": passed,
        "lenient_passed": lenient,
        "v1_groups": params.widened,
        "predicted": result.predicted,
        "correct": result.correct,
        "false_positives": result.false_positives,
        "root_causes": len(result.slots),
        "found": result.slots_found,
        "precision": round(result.precision, 6),
        "recall": round(result.recall, 6),
        "f1": round(result.f1, 6),
        "confidence": parsed.confidence,
        "low_confidence": parsed.confidence is not None
        and parsed.confidence < params.low_confidence,
        "false_positive_entities": wrong,
        "missed": missed,
        "reason": "; ".join(parts),
    }


def _unreadable(truth: RootCauseTruth, why: str) -> dict[str, Any]:
    slots = truth.slots()
    return {
        "mode": "deterministic",
        "passed": False,
        "lenient_passed": False,
        "v1_groups": False,
        "predicted": 0,
        "correct": 0,
        "false_positives": 0,
        "root_causes": len(slots),
        "found": 0,
        "precision": 0.0,
        "recall": 0.0 if slots else 1.0,
        "f1": 0.0,
        "confidence": None,
        "low_confidence": False,
        "false_positive_entities": [],
        "missed": [slot.label for slot in slots],
        "unreadable": why,
        "reason": f"the answer names no readable entities: {why}",
    }


async def _judge(
    params: RootCauseParams, truth: RootCauseTruth, evidence: Evidence
) -> dict[str, Any]:
    from benchyard.sre.judging import judge_root_causes

    if evidence.judge is None:
        raise CheckFailedToRun(
            "root_cause with judge: also/only needs a judge model: add `judge:` to benchyard.yaml"
        )
    verdict = await judge_root_causes(evidence.judge, truth, evidence.answer, evidence.trajectory)
    named_one = verdict.recall > 0
    passed = (
        verdict.recall >= params.min_recall
        and verdict.precision >= params.min_precision
        and named_one
    )
    return {
        "passed": passed,
        "lenient_passed": verdict.recall >= 1.0 and verdict.precision >= LENIENT_PRECISION,
        "predicted": verdict.predicted,
        "correct": verdict.correct,
        "precision": round(verdict.precision, 6),
        "recall": round(verdict.recall, 6),
        "f1": round(verdict.f1, 6),
        "reason": f"precision {verdict.precision:.2f}, recall {verdict.recall:.2f}: {verdict.explanation[:200]}",
    }
