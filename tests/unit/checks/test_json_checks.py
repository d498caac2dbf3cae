from __future__ import annotations

from typing import Any

import pytest

from benchyard.checks.json_checks import json_equal

from .helpers import check_type, params_error, run_check

ORDER = '{"id": 7, "total": 19.5, "paid": true, "note": null, "customer": {"name": "Ada"},'
ORDER += ' "items": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 5}], "tags": ["new", "vip"]}'


def test_json_checks_are_registered_with_a_summary() -> None:
    for name in ("json_valid", "json_schema", "output_match"):
        assert check_type(name).summary.startswith(("The answer", "The value"))


# json_valid


def test_json_valid_passes_on_a_bare_document() -> None:
    result = run_check("json_valid", '  {"a": [1, 2]}\n')
    assert result.passed
    assert result.reason == 'answer is valid JSON: {"a": [1, 2]}'


def test_json_valid_accepts_a_json_fence_by_default() -> None:
    answer = 'Here it is:\n```json\n{"a": 1}\n```\nAnything else?'
    assert run_check("json_valid", answer).passed
    assert run_check("json_valid", "```\n[1, 2]\n```").passed


def test_json_valid_refuses_a_fence_when_told() -> None:
    result = run_check("json_valid", '```json\n{"a": 1}\n```', allow_fence=False)
    assert not result.passed
    assert result.reason.startswith("answer is not valid JSON (Expecting value: line 1 column 1")


def test_json_valid_ignores_fences_of_other_languages() -> None:
    result = run_check("json_valid", '```python\n{"a": 1}\n```')
    assert not result.passed and "answer is not valid JSON" in result.reason


def test_json_valid_failure_quotes_the_answer() -> None:
    result = run_check("json_valid", "{'a': 1}")
    assert not result.passed
    assert result.reason == (
        "answer is not valid JSON (Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)): \"{'a': 1}\""
    )


def test_json_valid_reports_a_broken_fence() -> None:
    result = run_check("json_valid", '```json\n{"a": 1,}\n```')
    assert not result.passed
    assert result.reason.startswith("the ```json block is not valid JSON (")


# json_schema

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name", "age"],
}


def test_json_schema_passes_on_a_valid_answer() -> None:
    result = run_check("json_schema", '```json\n{"name": "Ada", "age": 36}\n```', schema=PERSON)
    assert result.passed and result.reason == "answer is valid against the schema"


def test_json_schema_lists_violations_with_their_paths() -> None:
    result = run_check("json_schema", '{"age": "old"}', schema=PERSON)
    assert not result.passed
    assert result.reason == (
        "answer violates the schema: $: 'name' is a required property; "
        "$.age: 'old' is not of type 'integer'"
    )


def test_json_schema_caps_the_listed_violations() -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    result = run_check("json_schema", "[1, 2, 3, 4, 5]", schema=schema)
    assert not result.passed
    assert result.reason.count("is not of type 'string'") == 3
    assert result.reason.endswith("(+2 more)")


def test_json_schema_checks_formats() -> None:
    schema = {"type": "string", "format": "date"}
    assert run_check("json_schema", '"2024-02-29"', schema=schema).passed
    assert not run_check("json_schema", '"2024-02-30"', schema=schema).passed


def test_json_schema_fails_on_a_non_json_answer() -> None:
    result = run_check("json_schema", "name: Ada", schema=PERSON)
    assert not result.passed and result.reason.startswith("answer is not valid JSON")


def test_json_schema_rejects_an_invalid_schema_at_load() -> None:
    error = params_error("json_schema", schema={"type": "object", "minProperties": "two"})
    assert "schema" in error
    assert "not a valid JSON Schema at $.minProperties: 'two' is not of type 'integer'" in error


def test_json_schema_requires_a_schema() -> None:
    assert "schema\n  Field required" in params_error("json_schema")


# output_match: one passing and one failing case per op


@pytest.mark.parametrize(
    ("path", "op", "value", "reason"),
    [
        ("$.id", "eq", 7, "$.id = 7 (equal to 7)"),
        ("$.total", "eq", 19.5, "$.total = 19.5 (equal to 19.5)"),
        (
            "$.customer",
            "eq",
            {"name": "Ada"},
            '$.customer = {"name": "Ada"} (equal to {"name": "Ada"})',
        ),
        ("$.note", "eq", None, "$.note = null (equal to null)"),
        ("$.id", "ne", 8, "$.id = 7 (not equal to 8)"),
        ("$.paid", "ne", 1, "$.paid = true (not equal to 1)"),
        ("$.customer.name", "contains", "Ad", '$.customer.name = "Ada" (containing "Ad")'),
        ("$.tags", "contains", "vip", '$.tags = ["new", "vip"] (containing "vip")'),
        ("$.customer", "contains", "name", '$.customer = {"name": "Ada"} (containing "name")'),
        (
            "$.items[0].sku",
            "regex",
            "^[A-Z]\\d$",
            '$.items[0].sku = "A1" (matching "^[A-Z]\\\\d$")',
        ),
        ("$.total", "gt", 19, "$.total = 19.5 (greater than 19)"),
        ("$.total", "gte", 19.5, "$.total = 19.5 (at least 19.5)"),
        ("$.id", "lt", 8, "$.id = 7 (less than 8)"),
        ("$.id", "lte", 7, "$.id = 7 (at most 7)"),
        (
            "$.customer.name",
            "in",
            ["Ada", "Bob"],
            '$.customer.name = "Ada" (one of ["Ada", "Bob"])',
        ),
        ("$.id", "type", "integer", '$.id = 7 (of type "integer")'),
        ("$.id", "type", "number", '$.id = 7 (of type "number")'),
        ("$.note", "type", "null", '$.note = null (of type "null")'),
        (
            "$.items",
            "length",
            2,
            '$.items = [{"sku": "A1", "qty": 2}, {"sku": "B2... (of length 2)',
        ),
        ("$.customer.name", "length", 3, '$.customer.name = "Ada" (of length 3)'),
    ],
)
def test_output_match_passes(path: str, op: str, value: Any, reason: str) -> None:
    result = run_check("output_match", ORDER, path=path, op=op, value=value)
    assert result.passed, result.reason
    assert result.reason == reason


@pytest.mark.parametrize(
    ("path", "op", "value", "reason"),
    [
        ("$.id", "eq", 8, "$.id = 7; expected equal to 8"),
        ("$.paid", "eq", 1, "$.paid = true; expected equal to 1"),
        ("$.id", "ne", 7, "$.id = 7; expected not equal to 7"),
        ("$.tags", "contains", "old", '$.tags = ["new", "vip"]; expected containing "old"'),
        ("$.id", "contains", "7", '$.id = 7; expected containing "7"'),
        (
            "$.customer",
            "contains",
            ["name"],
            '$.customer = {"name": "Ada"}; expected containing ["name"]',
        ),
        ("$.customer.name", "regex", "^B", '$.customer.name = "Ada"; expected matching "^B"'),
        ("$.id", "regex", "7", '$.id = 7; expected matching "7"'),
        ("$.total", "gt", 19.5, "$.total = 19.5; expected greater than 19.5"),
        ("$.total", "gte", 20, "$.total = 19.5; expected at least 20"),
        ("$.id", "lt", 7, "$.id = 7; expected less than 7"),
        ("$.id", "lte", 6.5, "$.id = 7; expected at most 6.5"),
        ("$.customer.name", "gt", 1, '$.customer.name = "Ada"; expected greater than 1'),
        ("$.id", "in", [1, 2], "$.id = 7; expected one of [1, 2]"),
        ("$.total", "type", "integer", '$.total = 19.5; expected of type "integer"'),
        ("$.paid", "type", "number", '$.paid = true; expected of type "number"'),
        ("$.tags", "length", 3, '$.tags = ["new", "vip"]; expected of length 3'),
        ("$.id", "length", 1, "$.id = 7; expected of length 1"),
    ],
)
def test_output_match_fails(path: str, op: str, value: Any, reason: str) -> None:
    result = run_check("output_match", ORDER, path=path, op=op, value=value)
    assert not result.passed and result.score == 0.0
    assert result.reason == reason


def test_output_match_defaults_to_eq() -> None:
    assert run_check("output_match", ORDER, path="$.customer.name", value="Ada").passed
    assert not run_check("output_match", ORDER, path="$.customer.name", value="Bob").passed


def test_output_match_any_and_all_over_several_nodes() -> None:
    path = "$.items[*].qty"
    assert run_check("output_match", ORDER, path=path, op="gt", value=4).passed
    result = run_check("output_match", ORDER, path=path, op="gt", value=4, match="all")
    assert not result.passed
    assert result.reason == "$.items[*].qty = 2; expected every node greater than 4"
    result = run_check("output_match", ORDER, path=path, op="gt", value=9)
    assert result.reason == "$.items[*].qty = 2, 5; expected some node greater than 9"
    assert run_check("output_match", ORDER, path=path, op="gte", value=2, match="all").passed


def test_output_match_filter_expressions() -> None:
    path = "$.items[?(@.qty > 3)].sku"
    result = run_check("output_match", ORDER, path=path, value="B2")
    assert result.passed and result.reason == '$.items[?(@.qty > 3)].sku = "B2" (equal to "B2")'


def test_output_match_caps_the_values_shown() -> None:
    result = run_check("output_match", "[1, 2, 3, 4, 5, 6, 7]", path="$[*]", op="gt", value=9)
    assert result.reason == "$[*] = 1, 2, 3, 4, 5 (+2 more); expected some node greater than 9"


def test_output_match_fails_when_the_path_matches_nothing() -> None:
    result = run_check("output_match", '{"a": 1}', path="$.b", value=1)
    assert not result.passed and result.reason == '$.b matched nothing in {"a": 1}'


def test_output_match_exists() -> None:
    result = run_check("output_match", ORDER, path="$.items[*].sku", op="exists")
    assert result.passed and result.reason == '$.items[*].sku matched 2 node(s): "A1", "B2"'
    result = run_check("output_match", ORDER, path="$.missing", op="exists")
    assert not result.passed and result.reason == "$.missing matched 0 node(s); expected a match"


def test_output_match_exists_false_requires_absence() -> None:
    assert run_check("output_match", ORDER, path="$.error", op="exists", value=False).passed
    result = run_check("output_match", ORDER, path="$.note", op="exists", value=False)
    assert not result.passed
    assert result.reason == "$.note matched 1 node(s): null; expected none"


def test_output_match_reads_fenced_json_and_reports_non_json() -> None:
    assert run_check("output_match", '```json\n{"a": 1}\n```', path="$.a", value=1).passed
    result = run_check("output_match", "a = 1", path="$.a", value=1)
    assert not result.passed and result.reason.startswith("answer is not valid JSON")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"path": "$.a", "op": "eq"}, "op 'eq' needs a 'value'"),
        ({"path": "$.a", "op": "gt", "value": "10"}, "op 'gt' needs a number as 'value', not '10'"),
        ({"path": "$.a", "op": "lte", "value": True}, "op 'lte' needs a number as 'value'"),
        ({"path": "$.a", "op": "in", "value": "ab"}, "op 'in' needs a list as 'value', not 'ab'"),
        ({"path": "$.a", "op": "type", "value": "str"}, "op 'type' needs one of array, boolean"),
        ({"path": "$.a", "op": "length", "value": -1}, "op 'length' needs a whole number >= 0"),
        ({"path": "$.a", "op": "length", "value": 2.5}, "op 'length' needs a whole number >= 0"),
        ({"path": "$.a", "op": "regex", "value": "("}, "invalid regular expression in 'value'"),
        ({"path": "$.a", "op": "regex", "value": 5}, "op 'regex' needs a pattern string"),
        ({"path": "$.a", "op": "exists", "value": "yes"}, "op 'exists' takes true or false"),
        ({"path": "$..[", "value": 1}, "path\n  Value error, invalid JSONPath: Parse error"),
        ({"path": "$.a", "op": "matches", "value": 1}, "op\n  Input should be 'eq', 'ne'"),
        ({"path": "$.a", "value": 1, "match": "most"}, "match\n  Input should be 'any' or 'all'"),
        ({"op": "exists"}, "path\n  Field required"),
    ],
)
def test_output_match_params_are_validated(params: dict[str, Any], message: str) -> None:
    assert message in params_error("output_match", **params)


@pytest.mark.parametrize(
    ("left", "right", "equal"),
    [
        (1, 1.0, True),
        (1, True, False),
        ([0, {"a": False}], [0.0, {"a": False}], True),
        ([0, {"a": False}], [0, {"a": 0}], False),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        (None, None, True),
    ],
)
def test_json_equal(left: Any, right: Any, equal: bool) -> None:
    assert json_equal(left, right) is equal
