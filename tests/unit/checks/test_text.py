from __future__ import annotations

from typing import Any

import pytest

from benchyard.checks.text import normalize_for_facts

from .helpers import check_type, params_error, run_check


def test_text_checks_are_registered_with_a_summary() -> None:
    for name in ("equals", "contains", "regex", "facts"):
        assert check_type(name).summary.startswith("The answer")


# equals


def test_equals_ignores_surrounding_whitespace() -> None:
    result = run_check("equals", "  Paris\n", value="Paris")
    assert result.passed and result.score == 1.0
    assert result.reason == "answer equals 'Paris'"


def test_equals_failure_says_expected_and_found() -> None:
    result = run_check("equals", "London", value="Paris")
    assert not result.passed and result.score == 0.0
    assert result.reason == "expected 'Paris', found 'London'"


def test_equals_is_case_sensitive_by_default() -> None:
    assert not run_check("equals", "paris", value="Paris").passed
    assert run_check("equals", "paris", value="Paris", case_sensitive=False).passed


def test_equals_normalize_whitespace_collapses_inner_runs() -> None:
    assert not run_check("equals", "New   York", value="New York").passed
    assert run_check("equals", "New \n York", value="New York", normalize_whitespace=True).passed


def test_equals_reason_truncates_long_answers() -> None:
    result = run_check("equals", "x" * 500, value="y")
    found = result.reason.split("found ", 1)[1]
    assert found.endswith("...'") and len(found) <= 82


def test_equals_rejects_unknown_params() -> None:
    assert "Extra inputs are not permitted" in params_error("equals", value="x", casesensitive=True)


# contains


def test_contains_all_passes_when_every_substring_appears() -> None:
    result = run_check("contains", "Paris is the CAPITAL of France", value=["capital", "france"])
    assert result.passed
    assert result.reason == "contains all of 'capital', 'france': found all"


def test_contains_all_lists_the_missing_substrings() -> None:
    result = run_check("contains", "Paris is lovely", value=["Paris", "France", "capital"])
    assert not result.passed
    assert result.reason == (
        "contains all of 'Paris', 'France', 'capital': missing 'France', 'capital' "
        "(found 'Paris') in answer 'Paris is lovely'"
    )


def test_contains_any_passes_on_one_substring() -> None:
    result = run_check("contains", "it is blue", value=["red", "blue"], mode="any")
    assert result.passed and result.reason == "contains any of 'red', 'blue': found 'blue'"


def test_contains_any_fails_when_none_appears() -> None:
    result = run_check("contains", "it is green", value=["red", "blue"], mode="any")
    assert not result.passed
    assert result.reason == "contains any of 'red', 'blue': found none in answer 'it is green'"


def test_contains_single_string_and_case_sensitivity() -> None:
    assert run_check("contains", "HELLO world", value="hello").passed
    assert not run_check("contains", "HELLO world", value="hello", case_sensitive=True).passed


@pytest.mark.parametrize("value", ["", [], ["a", ""]])
def test_contains_rejects_empty_substrings(value: object) -> None:
    assert "give at least one non-empty substring" in params_error("contains", value=value)


def test_contains_rejects_unknown_mode() -> None:
    assert "mode" in params_error("contains", value="a", mode="most")


# regex


def test_regex_searches_anywhere_and_quotes_the_match() -> None:
    result = run_check("regex", "Order #A-123 shipped", pattern=r"[A-Z]-\d+")
    assert result.passed
    assert result.reason == "/[A-Z]-\\d+/ matched 'A-123'"


def test_regex_failure_quotes_the_answer() -> None:
    result = run_check("regex", "no order here", pattern=r"\d+")
    assert not result.passed
    assert result.reason == "/\\d+/ not found in answer 'no order here'"


@pytest.mark.parametrize(
    ("flags", "answer", "pattern"),
    [("i", "HELLO", "hello"), ("m", "one\ntwo", "^two$"), ("s", "a\nb", "a.b")],
)
def test_regex_flags(flags: str, answer: str, pattern: str) -> None:
    assert not run_check("regex", answer, pattern=pattern).passed
    assert run_check("regex", answer, pattern=pattern, flags=flags).passed


def test_regex_full_match_needs_the_whole_stripped_answer() -> None:
    assert run_check("regex", "  42\n", pattern=r"\d+", full_match=True).passed
    result = run_check("regex", "42 apples", pattern=r"\d+", full_match=True)
    assert not result.passed
    assert result.reason == "answer does not fully match /\\d+/: '42 apples'"


def test_regex_rejects_a_bad_pattern_at_load() -> None:
    error = params_error("regex", pattern="(unclosed")
    assert "pattern" in error and "invalid regular expression" in error


def test_regex_rejects_unknown_flags() -> None:
    assert "unknown flag(s) 'x'" in params_error("regex", pattern="a", flags="ix")


# facts


def test_facts_all_found_despite_case_punctuation_and_separators() -> None:
    answer = "The Eiffel-Tower is 330 metres tall; about 1,200 steps... (roughly)."
    result = run_check("facts", answer, facts=["eiffel tower", "330 metres", "1200 steps"])
    assert result.passed and result.score == 1.0
    assert result.reason == "found 3/3 facts"


def test_facts_thousands_separator_in_the_fact() -> None:
    assert run_check("facts", "It cost 1200 dollars", facts=["1,200 dollars"]).passed


def test_facts_alternative_phrasings() -> None:
    facts = [["USA", "United States"], "Washington"]
    assert run_check("facts", "The United States' capital: Washington.", facts=facts).passed


def test_facts_match_whole_words_and_numbers() -> None:
    assert not run_check("facts", "about 1,200 people", facts=["120"]).passed
    assert not run_check("facts", "concatenate", facts=["cat"]).passed


def test_facts_keeps_decimals_distinct() -> None:
    assert run_check("facts", "pi is 3.14, roughly", facts=["3.14"]).passed
    assert not run_check("facts", "pi is 3.14", facts=["3 14"]).passed


def test_facts_partial_score_and_missing_list() -> None:
    facts = ["paris", ["berlin", "germany"], "rome"]
    result = run_check("facts", "Paris and Rome", facts=facts, min_ratio=0.5)
    assert result.passed
    assert result.score == pytest.approx(2 / 3)
    assert result.reason == "found 2/3 facts (need 50%); missing: 'berlin' / 'germany'"


def test_facts_fail_below_min_ratio() -> None:
    result = run_check("facts", "Paris", facts=["paris", "rome", "oslo"])
    assert not result.passed
    assert result.score == pytest.approx(1 / 3)
    assert result.reason == "found 1/3 facts (need 100%); missing: 'rome'; 'oslo'"


@pytest.mark.parametrize("min_ratio", [0, -0.5, 1.5])
def test_facts_min_ratio_must_be_in_0_1(min_ratio: float) -> None:
    assert "min_ratio" in params_error("facts", facts=["a"], min_ratio=min_ratio)


@pytest.mark.parametrize("facts", [[], ["..."], [[]], [["ok", ""]]])
def test_facts_rejects_empty_facts(facts: object) -> None:
    assert "facts" in params_error("facts", facts=facts)


@pytest.mark.parametrize(
    ("text", "normal"),
    [
        ("The total: $1,234,567.89!", "the total 1234567.89"),
        ("U.S.A.", "u s a"),
        ("snake_case  and\tTABS", "snake case and tabs"),
        ("list 1,2,3", "list 1,2,3"),
        ("ﬁve", "five"),
    ],
)
def test_normalize_for_facts(text: str, normal: str) -> None:
    assert normalize_for_facts(text) == normal


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("equals", {"value": "42"}),
        ("regex", {"pattern": "^42$"}),
        ("regex", {"pattern": "42", "full_match": True}),
        ("contains", {"value": "42"}),
        ("is_refusal", {"extra_patterns": ["^42$"]}),
        ("response_shape", {"unit": "chars", "max_length": 2, "ends_with": "42"}),
    ],
)
def test_wording_checks_ignore_the_whitespace_around_a_raw_answer(
    name: str, params: dict[str, Any]
) -> None:
    # answers are stored as given (a model's leading blank line, a program's trailing newline):
    # the checks that read wording give the verdict they gave on the stripped answer
    for answer in ("42", "42\n", "\n\n42\n\n", " 42 "):
        result = run_check(name, answer, **params)
        assert result.passed, (answer, result.reason)
