"""The judge mode of the `root_cause` check, after ITBench's official evaluator: a judge model
reads the agent's whole output and the ground truth and says which predicted entities match
which root causes; precision, recall and F1 are computed from its matches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchyard.checks.base import Judge
from benchyard.checks.judge import SYSTEM, _json_object
from benchyard.runner.trajectory import Event
from benchyard.sre.matching import RootCauseTruth

OUTPUT_CHARS = 6000


@dataclass(frozen=True)
class JudgeVerdict:
    predicted: int
    correct: int
    matched_root_causes: int
    root_causes: int
    explanation: str

    @property
    def precision(self) -> float:
        if not self.predicted:
            return 0.0 if self.root_causes else 1.0
        return self.correct / self.predicted

    @property
    def recall(self) -> float:
        return self.matched_root_causes / self.root_causes if self.root_causes else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def truth_text(truth: RootCauseTruth) -> str:
    slots = truth.slots()
    if not slots:
        return "(none: nothing was broken; the alerts were a false alarm)"
    lines = []
    for number, slot in enumerate(slots, start=1):
        lines.append(f"{number}. {slot.label}")
        for group in slot.groups:
            lines.append(f"   also accepted: {group}")
    return "\n".join(lines)


def prompt(truth: RootCauseTruth, output: str) -> str:
    return (
        "An SRE agent investigated a Kubernetes incident and named its root cause(s). Decide, for "
        "each entity the agent names as a root cause, which ground-truth root cause it matches "
        "(the same object, or one listed as also accepted), or none.\n\n"
        f"Ground-truth root causes:\n{truth_text(truth)}\n\n"
        f"Agent output:\n<<<\n{output[:OUTPUT_CHARS]}\n>>>\n\n"
        'Reply with JSON of the form {"predictions": [{"entity": "Kind/namespace/name as the '
        'agent named it", "matches": 1}], "explanation": "..."} with one entry per entity the '
        "agent names as a root cause (not entities it only mentions), `matches` being the number "
        "of the ground-truth root cause or null."
    )


def parse_reply(reply: str, root_causes: int) -> JudgeVerdict:
    value = _json_object(reply)
    items = value.get("predictions")
    if not isinstance(items, list):
        raise ValueError("no 'predictions' list")
    correct, matched = 0, set()
    for item in items:
        if not isinstance(item, dict):
            raise ValueError("a prediction is not an object")
        number = item.get("matches")
        if number is None:
            continue
        if (
            not isinstance(number, int)
            or isinstance(number, bool)
            or not 1 <= number <= root_causes
        ):
            raise ValueError(f"'matches' must be null or 1..{root_causes}, found {number!r}")
        correct += 1
        matched.add(number)
    return JudgeVerdict(
        len(items), correct, len(matched), root_causes, str(value.get("explanation") or "")
    )


async def judge_root_causes(
    judge: Judge, truth: RootCauseTruth, output: str, sink: list[Event]
) -> JudgeVerdict:
    count = len(truth.slots())
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": prompt(truth, output)},
    ]
    return await judge.verdict(
        messages, lambda reply: parse_reply(reply, count), sink, "root_cause"
    )
