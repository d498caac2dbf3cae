"""GSM8K's answer rules and IFEval's instructions, graded as the official evaluators grade them
(quirks included), and the report's figures for both."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from benchyard.formats.ifeval.check import follows, loose_variants
from benchyard.formats.ifeval.importer import ifeval_metrics
from benchyard.store.records import AttemptRecord, CheckRecord
from tests.unit.checks.helpers import params_error, run_check


@pytest.mark.parametrize(
    ("answer", "expected", "passed"),
    [
        ("so 1234 hens\n#### 1,234", "1234", True),  # thousands separators are removed
        ("#### 1234.0", "1234", False),  # equal as text only
        ("The answer is 1234.", "1234", False),  # no '#### ': invalid
        ("#### $1234", "1234", False),  # the sign of a dollar does not match the number
        ("#### 12\nno wait\n#### 1234", "1234", False),  # the first match counts
        ("####1234", "1234", False),  # '#### ' needs its space
    ],
)
def test_the_official_gsm8k_rule(answer: str, expected: str, passed: bool) -> None:
    result = run_check("gsm8k_answer", answer, expected=expected, rule="official")
    assert result.passed is passed, result.reason
    assert result.reason.startswith("official:")


def test_the_numeric_rule_reads_the_final_number_leniently() -> None:
    assert run_check(
        "gsm8k_answer", "It costs $1,234.00 in all.", expected="1234", rule="numeric"
    ).passed
    result = run_check("gsm8k_answer", "#### 1234.0", expected="1234", rule="numeric")
    assert result.passed and result.reason.startswith("numeric:")
    assert "needs a number" in params_error("gsm8k_answer", expected="3/4", rule="numeric")


def test_strict_fails_where_only_loose_passes() -> None:
    response = "Sure, here it is:\nA cat is a small soft animal"
    assert not follows("punctuation:no_comma", {}, response, "strict")
    assert follows("punctuation:no_comma", {}, response, "loose")  # without the first line
    assert len(loose_variants(response)) == 8
    starred = "*Hello*\nWorld"
    assert not follows("startend:end_checker", {"end_phrase": "*hello*"}, "Bye", "loose")
    assert follows("detectable_format:title", {}, "<<A title>>", "strict")
    assert not follows("detectable_format:title", {}, starred, "loose")


@pytest.mark.parametrize(
    ("instruction", "kwargs", "response", "followed"),
    [
        ("keywords:existence", {"keywords": ["c.t"]}, "the CAT sat", True),  # a regex, any case
        (
            "keywords:frequency",
            {"keyword": "a", "frequency": 3, "relation": "less than"},
            "aaa",
            False,
        ),
        ("keywords:forbidden_words", {"forbidden_words": ["dog"]}, "dogs run", True),
        (
            "keywords:letter_frequency",
            {"letter": "Z", "let_frequency": 2, "let_relation": "at least"},
            "zZ",
            True,
        ),
        (
            "length_constraints:number_sentences",
            {"num_sentences": 2, "relation": "at least"},
            "Dr. Smith came. He sat.",
            True,
        ),
        (
            "length_constraints:number_sentences",
            {"num_sentences": 3, "relation": "at least"},
            "Dr. Smith came. He sat.",
            False,
        ),
        ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "one\n***\ntwo", True),
        (
            "length_constraints:number_paragraphs",
            {"num_paragraphs": 2},
            "one\n***\n***\ntwo",
            False,
        ),
        (
            "length_constraints:number_words",
            {"num_words": 3, "relation": "less than"},
            "it's ok",
            False,
        ),
        (
            "length_constraints:nth_paragraph_first_word",
            {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
            'first\n\n"Then, more',
            True,
        ),
        ("detectable_content:number_placeholders", {"num_placeholders": 2}, "[a] and [b]", True),
        (
            "detectable_content:postscript",
            {"postscript_marker": "P.P.S"},
            "text\np. p. s: more",
            True,
        ),
        ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* a\n- b\n**bold**", True),
        ("detectable_format:constrained_response", {}, "Well. My answer is maybe.", True),
        (
            "detectable_format:number_highlighted_sections",
            {"num_highlights": 2},
            "*a* and **b**",
            True,
        ),
        (
            "detectable_format:multiple_sections",
            {"section_spliter": "Section", "num_sections": 2},
            "Section 1\na\nSection 2\nb",
            True,
        ),
        ("detectable_format:json_format", {}, '```json\n{"a": 1}\n```', True),
        ("combination:two_responses", {}, "one\n******\none", False),
        ("combination:repeat_prompt", {"prompt_to_repeat": "Say hi"}, "say HI then hi", True),
        (
            "change_case:capital_word_frequency",
            {"capital_frequency": 2, "capital_relation": "at least"},
            "I LOVE NYC",
            True,
        ),
        ("change_case:english_capital", {}, "THIS IS ENGLISH TEXT WRITTEN IN CAPITALS", True),
        ("change_case:english_lowercase", {}, "this is english text written in lowercase", True),
        (
            "language:response_language",
            {"language": "fr"},
            "Bonjour, je suis très content de vous voir aujourd'hui.",
            True,
        ),
        ("language:response_language", {"language": "fr"}, "12345", True),  # undetectable: followed
        ("startend:quotation", {}, ' "quoted" ', True),
    ],
)
def test_instructions_follow_the_official_rules(
    instruction: str, kwargs: dict[str, object], response: str, followed: bool
) -> None:
    assert follows(instruction, kwargs, response, "strict") is followed


def test_an_empty_response_follows_nothing() -> None:
    assert not follows("punctuation:no_comma", {}, "   ", "strict")
    result = run_check("ifeval", " ", instruction="punctuation:no_comma")
    assert not result.passed and "empty response" in result.reason


def test_instruction_parameters_are_checked_at_load_time() -> None:
    assert "unknown IFEval instruction" in params_error("ifeval", instruction="punctuation:comma")
    assert "needs kwargs num_words" in params_error(
        "ifeval", instruction="length_constraints:number_words", kwargs={"relation": "at least"}
    )


def _attempt(sid: str, results: dict[str, bool]) -> AttemptRecord:
    now = datetime.now(UTC)
    return AttemptRecord(
        id=sid,
        run_id="r",
        scenario_id=sid,
        category="ifeval",
        epoch=1,
        try_number=1,
        verdict="passed",
        score=1.0,
        started_at=now,
        finished_at=now,
        duration_sec=0.0,
        checks=[
            CheckRecord(i, "ifeval", label, passed, float(passed), 1.0, "")
            for i, (label, passed) in enumerate(results.items())
        ],
    )


def test_prompt_level_and_instruction_level_accuracy_in_both_modes() -> None:
    attempts = [
        _attempt(
            "a",
            {
                "strict punctuation:no_comma": False,
                "strict startend:quotation": True,
                "loose punctuation:no_comma": True,
                "loose startend:quotation": True,
            },
        ),
        _attempt("b", {"strict punctuation:no_comma": True, "loose punctuation:no_comma": True}),
    ]
    figures = ifeval_metrics(attempts)
    assert figures["strict"]["prompt_level_raw"] == "1/2"
    assert figures["strict"]["instruction_level_raw"] == "2/3"
    assert figures["loose"]["prompt_level"] == 1.0
    assert figures["strict"]["by_instruction_group"] == {"punctuation": 0.5, "startend": 1.0}
