"""GSM8K (`test.jsonl`, `train.jsonl`: `question`, `answer`): one scenario per problem, graded by
the `gsm8k_answer` check with the official rule (the number after `#### `, commas removed, equal
as text) or benchyard's lenient `numeric` reading (`--option rule=numeric`). The worked solution
is the reference; the report names the rule used."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from benchyard.formats.gsm8k.check import INVALID, RULES, official_answer
from benchyard.importers.base import ImportOptions, message_stimulus
from benchyard.importers.source import Fields, RecordImporter

if TYPE_CHECKING:
    from benchyard.store.records import AttemptRecord

OFFICIAL_INSTRUCTION = (
    "Solve the problem step by step. End your answer with a last line of the form "
    '"#### <number>", the number alone (no units, no commas).'
)
NUMERIC_INSTRUCTION = "Solve the problem step by step, and end with the final number."


def scenario_id(index: int) -> str:
    return f"gsm8k-{index:04d}"


class Gsm8kOptions(ImportOptions):
    rule: Literal["official", "numeric"] = Field(
        default="official", description="official: `#### N` equal as text; numeric: final number."
    )
    system: str | None = Field(
        default=None,
        description="The system prompt (default: an instruction for the rule's answer format; "
        "empty for none).",
    )


class Gsm8kImporter(RecordImporter):
    name = "gsm8k"
    summary = "GSM8K JSONL: the official `####` answer rule, or lenient numeric"
    options = Gsm8kOptions

    def describe(self, options: Gsm8kOptions) -> str:
        return f"GSM8K grade-school math word problems; answer rule: {RULES[options.rule]}."

    def scenario(self, fields: Fields, options: Gsm8kOptions) -> dict[str, Any] | None:
        return scenario_data(fields, options)

    def metrics(
        self, attempts: Sequence[AttemptRecord], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        rule = str(options.get("rule", "official"))
        return {"answer_rule": RULES.get(rule, rule)}


def scenario_data(fields: Fields, options: Gsm8kOptions) -> dict[str, Any] | None:
    """One problem's scenario, or None when its fields have problems."""
    question = fields.get("question", str)
    answer = fields.get("answer", str)
    expected = official_answer(answer) if answer is not None else INVALID
    if answer is not None and expected == INVALID:
        fields.problem("answer", "has no final line '#### <number>'")
    if expected != INVALID and options.rule == "numeric":
        try:
            float(expected)
        except ValueError:
            fields.problem("answer", f"the final answer {expected!r} is not a number")
    if not fields.ok:
        return None
    assert question is not None and answer is not None
    return {
        "id": scenario_id(fields.record.index),
        "category": "gsm8k",
        "tags": ["gsm8k", "math"],
        "stimulus": message_stimulus(question, system_prompt(options)),
        "reference": answer,
        "checks": [{"type": "gsm8k_answer", "expected": expected, "rule": options.rule}],
    }


def system_prompt(options: Gsm8kOptions) -> str:
    """The system prompt given, else the instruction for the rule's answer format."""
    if options.system is not None:
        return options.system
    return OFFICIAL_INSTRUCTION if options.rule == "official" else NUMERIC_INSTRUCTION


IMPORTER = Gsm8kImporter()
