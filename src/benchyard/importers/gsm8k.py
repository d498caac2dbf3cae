"""GSM8K (`test.jsonl`, `train.jsonl`: `question`, `answer`): one scenario per problem, graded by
the `gsm8k_answer` check with the official rule (the number after `#### `, commas removed, equal
as text) or benchyard's lenient `numeric` reading (`--option rule=numeric`). The worked solution
is the reference; the report names the rule used."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from benchyard.checks.formats.gsm8k import INVALID, RULES, official_answer
from benchyard.importers.base import (
    BaseImporter,
    Imported,
    ImportedScenario,
    ImportOptions,
    Origin,
    ProblemList,
)
from benchyard.importers.source import Fields, read_records

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


class Gsm8kImporter(BaseImporter):
    name = "gsm8k"
    format_version = "1"
    summary = "GSM8K JSONL: the official `####` answer rule, or lenient numeric"
    source_kind = "file"
    options = Gsm8kOptions

    def read(self, source: Path, options: Any) -> Imported:
        assert isinstance(options, Gsm8kOptions)
        problems = ProblemList()
        scenarios = []
        system = options.system
        if system is None:
            system = OFFICIAL_INSTRUCTION if options.rule == "official" else NUMERIC_INSTRUCTION
        for record in read_records(source, problems):
            fields = Fields(record, problems)
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
                continue
            assert question is not None and answer is not None
            stimulus: dict[str, Any] = {"message": question}
            if system:
                stimulus["system"] = system
            data: dict[str, Any] = {
                "id": scenario_id(record.index),
                "category": "gsm8k",
                "tags": ["gsm8k", "math"],
                "stimulus": stimulus,
                "reference": answer,
                "checks": [{"type": "gsm8k_answer", "expected": expected, "rule": options.rule}],
            }
            scenarios.append(ImportedScenario(data, Origin(source, record.line), "gsm8k"))
        problems.raise_if_any()
        return Imported(
            name="gsm8k",
            version="1",
            description=f"GSM8K grade-school math word problems; answer rule: {RULES[options.rule]}.",
            scenarios=scenarios,
        )

    def metrics(
        self, attempts: Sequence[AttemptRecord], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        rule = str(options.get("rule", "official"))
        return {"answer_rule": RULES.get(rule, rule)}


IMPORTER = Gsm8kImporter()
