"""`contains_json`: a JSON object or array found inside prose, optionally valid against a schema."""

from __future__ import annotations

import json
import time

import pytest

from benchyard.checks.answer_json import MAX_DEPTH
from benchyard.checks.json_embedded import _structure_end, embedded_json

from .helpers import params_error, run_check

PERSON = {
    "type": "object",
    "required": ["name", "age"],
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
}


def test_finds_an_object_in_prose() -> None:
    answer = 'Sure! Here is the record you asked for: {"name": "Ada", "age": 36}. Anything else?'
    result = run_check("contains_json", answer)
    assert result.passed
    assert result.reason == 'found a JSON object at line 1: {"name": "Ada", "age": 36}'


def test_finds_an_array_in_a_fence_on_a_later_line() -> None:
    answer = "The primes:\n\n```json\n[2, 3, 5, 7]\n```\n"
    result = run_check("contains_json", answer)
    assert result.passed
    assert result.reason == "found a JSON array at line 4: [2, 3, 5, 7]"


@pytest.mark.parametrize(
    "answer",
    [
        "No JSON here at all.",
        "A set {1, 2} and a list [a, b] are not JSON.",
        '{"name": "Ada", "age": 36',  # never closed
        "42",  # a scalar is not an embedded object or array
    ],
)
def test_fails_without_an_object_or_array(answer: str) -> None:
    result = run_check("contains_json", answer)
    assert not result.passed
    assert result.reason.startswith("no JSON object or array in the answer: ")


def test_a_broken_outer_object_still_yields_the_valid_one_inside() -> None:
    answer = 'Result: {"ok": true, "data": {"name": "Ada", "age": 36}, oops}'
    scan = embedded_json(answer)
    assert [found.value for found in scan.found] == [{"name": "Ada", "age": 36}]
    result = run_check("contains_json", answer, schema=PERSON)
    assert result.passed
    assert result.reason.startswith("a JSON object at line 1 is valid against the schema: ")


def test_schema_picks_the_value_that_satisfies_it() -> None:
    answer = 'Config is {"debug": false}; the person is {"name": "Ada", "age": 36}.'
    result = run_check("contains_json", answer, schema=PERSON)
    assert result.passed
    assert result.reason == (
        'a JSON object at line 1 is valid against the schema: {"name": "Ada", "age": 36}'
    )


def test_schema_failure_says_what_each_candidate_lacks() -> None:
    answer = 'First {"name": "Ada"} and then\n{"name": "Bob", "age": -1}'
    result = run_check("contains_json", answer, schema=PERSON)
    assert not result.passed
    assert result.reason == (
        "none of the 2 JSON value(s) found satisfies the schema: "
        'a JSON object at line 1 {"name": "Ada"}: $: \'age\' is a required property; '
        'a JSON object at line 2 {"name": "Bob", "age": -1}: $.age: -1 is less than the '
        "minimum of 0"
    )


def test_values_nested_too_deep_are_refused_whole() -> None:
    """The depth cap of answer_json holds: neither the deep value nor its inner parts count."""
    deep = "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)
    result = run_check("contains_json", f"look: {deep} done")
    assert not result.passed
    assert f"1 value(s) refused for nesting over {MAX_DEPTH} levels" in result.reason
    shallow = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert run_check("contains_json", f"look: {shallow} done").passed


def test_values_too_deep_for_the_parser_are_refused_whole_too() -> None:
    deep = "[" * 5_000 + "1" + "]" * 5_000
    scan = embedded_json(f"{deep} and then [1, 2]")
    assert [found.value for found in scan.found] == [[1, 2]]
    assert scan.too_deep == 1


def test_the_end_of_a_deep_value_skips_brackets_in_strings() -> None:
    text = r'["a\\", "]", {"b": "\"}"}] tail'
    assert json.loads(text[: text.index(" tail")]) == ["a\\", "]", {"b": '"}'}]
    assert _structure_end(text, 0) == text.index("] tail") + 1


@pytest.mark.parametrize(
    "answer",
    [
        "[" * 200_000,  # each start would recurse until the parser gives up
        "{" * 500_000,
        "[1," * 200_000,  # each start reads to the end before failing
        "x [" * 100_000,
    ],
)
def test_hostile_answers_are_scanned_quickly(answer: str) -> None:
    started = time.perf_counter()
    result = run_check("contains_json", answer)
    assert time.perf_counter() - started < 5
    assert not result.passed


def test_an_invalid_schema_is_a_load_time_error() -> None:
    assert "not a valid JSON Schema" in params_error("contains_json", schema={"type": "nothing"})
    assert "Extra inputs are not permitted" in params_error("contains_json", allow_fence=True)
