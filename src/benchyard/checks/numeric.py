"""The `numeric` check: the final number in the answer, within a tolerance of the expected value."""

from __future__ import annotations

import math
import re

from pydantic import Field

from benchyard.checks.answer_text import quote
from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check

# A number as models write it: "-3", "1,234", "2.5", "$1,234.50", ".5", "1e-3";
# the sign may be U+2212; a "-" joining two words is no sign ("pages 3-5", "covid-19").
_NUMBER = re.compile(
    r"""
    (?P<sign>(?<![\w.])[-\u2212])? \$?
    (?P<digits>
        (?<![\d.])
        (?: (?:\d{1,3}(?:,\d{3})+(?!\d) | \d+) (?:\.\d+)? | \.\d+ )
        (?:[eE][-+]?\d+)?
    )
    """,
    re.VERBOSE,
)


class NumericParams(CheckParams):
    value: float = Field(allow_inf_nan=False, description="The expected number.")
    tolerance: float = Field(default=0.0, ge=0, description="Largest absolute difference allowed.")
    rel_tolerance: float = Field(
        default=0.0, ge=0, description="Largest difference allowed, as a fraction of the value."
    )

    def allowed_difference(self) -> float:
        return max(self.tolerance, self.rel_tolerance * abs(self.value))


def final_number(text: str) -> float | None:
    """The last number written in `text` ("####  42" and "$1,234.50." included), or None."""
    matches = list(_NUMBER.finditer(text))
    if not matches:
        return None
    last = matches[-1]
    number = float(last["digits"].replace(",", ""))
    return -number if last["sign"] else number


def format_number(number: float) -> str:
    """`42` rather than `42.0`; other floats as Python writes them."""
    return str(int(number)) if number.is_integer() and abs(number) < 1e16 else repr(number)


@check("numeric", NumericParams)
def numeric(params: NumericParams, evidence: Evidence) -> CheckResult:
    """The final number in the answer equals the expected value, within the tolerance."""
    found = final_number(evidence.answer)
    expected = format_number(params.value)
    if found is None:
        return CheckResult.of(False, f"no number in the answer {quote(evidence.answer.strip())}")
    allowed = params.allowed_difference()
    difference = abs(found - params.value)
    shown = format_number(found)
    if difference == 0:
        return CheckResult.of(True, f"final number {shown} equals expected {expected}")
    if difference <= allowed or math.isclose(difference, allowed):
        return CheckResult.of(
            True, f"final number {shown} is within {format_number(allowed)} of expected {expected}"
        )
    return CheckResult.of(
        False,
        f"final number {shown} differs from expected {expected} "
        f"by {format_number(difference)} (allowed {format_number(allowed)})",
    )
