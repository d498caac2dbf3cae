"""`gsm8k_answer`: GSM8K's answer rule, official or lenient.

- `official` (grade_school_math/dataset.py): the first match of `#### (-?[0-9.,]+)` in the
  answer, stripped, commas deleted, must equal the expected answer **as text**: `18.0` is not
  `18`, `$18` and an answer without `####` are wrong.
- `numeric`: benchyard's `numeric` reading, the final number in the answer (`$1,234.50`, `18.0`,
  `-3`), equal to the expected number.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, model_validator

from benchyard.checks.answer_text import quote
from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.numeric import final_number, format_number
from benchyard.checks.registry import check

OFFICIAL_ANSWER = re.compile(r"#### (\-?[0-9\.\,]+)")
INVALID = "[invalid]"
RULES = {
    "official": "official: the number after the first '#### ', commas removed, equal as text",
    "numeric": "numeric: the final number in the answer, equal as a number",
}


class Gsm8kParams(CheckParams):
    expected: str = Field(min_length=1, description="The expected answer, as the rule reads it.")
    rule: Literal["official", "numeric"] = "official"

    @model_validator(mode="after")
    def _a_number_for_numeric(self) -> Gsm8kParams:
        if self.rule == "numeric":
            try:
                float(self.expected)
            except ValueError:
                raise ValueError(
                    f"the numeric rule needs a number, found {self.expected!r}"
                ) from None
        return self


def official_answer(text: str) -> str:
    """The official extraction: `[invalid]` when there is no `#### <number>`."""
    found = OFFICIAL_ANSWER.search(text)
    if found is None:
        return INVALID
    return found.group(1).strip().replace(",", "")


@check("gsm8k_answer", Gsm8kParams)
def gsm8k_answer(params: Gsm8kParams, evidence: Evidence) -> CheckResult:
    """GSM8K's answer rule: the official `####` rule, or the final number (numeric)."""
    rule = RULES[params.rule]
    if params.rule == "official":
        found = official_answer(evidence.answer)
        if found == INVALID:
            return CheckResult.of(False, f"{rule}: no '#### <number>' in the answer")
        passed = found == params.expected
        verb = "equals" if passed else "differs from"
        return CheckResult.of(passed, f"{rule}: {found!r} {verb} {params.expected!r}")
    number = final_number(evidence.answer)
    expected = float(params.expected)
    if number is None:
        return CheckResult.of(False, f"{rule}: no number in {quote(evidence.answer)}")
    passed = number == expected
    verb = "equals" if passed else "differs from"
    return CheckResult.of(
        passed, f"{rule}: {format_number(number)} {verb} {format_number(expected)}"
    )
