"""`function_call_ast` on prompt-mode replies that benchyard's decoder declines to compute, against
the official BFCL v4 evaluator (bfcl-eval 2026.3.23: `relevance_file_runner` counts a reply as a
call whenever `decode_ast` succeeds with a non-empty result; its `resolve_ast_by_type` evals
arithmetic, and keeps a `**` argument under the name None)."""

from __future__ import annotations

import pytest

from benchyard.checks.base import CheckResult
from tests.unit.checks.helpers import run_check

BFCL_FUNCTION = {
    "name": "determine_body_mass_index",
    "description": "BMI from weight and height.",
    "parameters": {
        "type": "dict",
        "properties": {"weight": {"type": "float"}, "height": {"type": "float"}},
        "required": ["weight", "height"],
    },
}


def _irrelevance(answer: str) -> CheckResult:
    return run_check(
        "function_call_ast",
        answer,
        category="irrelevance",
        functions=[BFCL_FUNCTION],
        source="answer",
    )


@pytest.mark.parametrize(
    "answer",
    [
        "[determine_body_mass_index(weight=2**2000, height=1.8)]",  # official: eval computes it
        "[math.sum(x='a'*20000)]",
        "[determine_body_mass_index(weight=10**200)]",
        "[f(**{'x': 1})]",  # official: {'f': {None: {'x': 1}}}
        "[f(x=1), g(y=2**5000 + 1)]",
        "[f(x=[0] * 10**8)]",  # official: a list of 10**8 zeros
        "[f(x='ab' * 10000 * 10000)]",
    ],
)
def test_bfcl_official_v4_a_call_beyond_benchyards_bounds_is_a_call_on_irrelevance(
    answer: str,
) -> None:
    result = _irrelevance(answer)
    assert not result.passed
    assert "irrelevance_error:decoder_success" in result.reason
    assert "does not compute" in result.reason


@pytest.mark.parametrize(
    "answer",
    [
        "I cannot compute a BMI without a weight.",
        "[f(x=1/0)]",  # official: eval raises ZeroDivisionError, the decoding fails
        "[f(x=g()+1)]",  # official: eval raises NameError
        "[f(x=2**2000), 42]",  # official: an element that is no call fails the decoding
        "[f(x=-'a')]",  # official: `-` on a str raises TypeError
        "[f(x=-(2**5000))]",  # official: `-` on anything but a constant fails the decoding
        "[f(x=2.0**2000)]",  # official: eval raises OverflowError
        "[f(x={**y})]",  # official: a dict's ** key cannot be resolved
    ],
)
def test_bfcl_official_v4_a_reply_the_official_decoder_rejects_is_no_call(answer: str) -> None:
    result = _irrelevance(answer)
    assert result.passed, result.reason


def test_bfcl_official_v4_a_value_beyond_the_bounds_still_fails_a_relevant_category() -> None:
    result = run_check(
        "function_call_ast",
        "[determine_body_mass_index(weight=2**2000, height=1.8)]",
        category="simple",
        functions=[BFCL_FUNCTION],
        ground_truth=[{"determine_body_mass_index": {"weight": [70.0], "height": [1.8]}}],
        source="answer",
    )
    assert not result.passed and "ast_decoder:decoder_failed" in result.reason
