from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from benchyard.checks.answer_json import NotJson, json_type_name, json_types, parse_answer_json


def test_parse_answer_json_prefers_the_whole_answer() -> None:
    assert parse_answer_json(' {"a": "```json\\n1\\n```"} ') == {"a": "```json\n1\n```"}


def test_parse_answer_json_uses_the_first_json_fence() -> None:
    answer = 'Text\n```python\nx = 1\n```\n```json\n{"b": 2}\n```\n```json\n{"c": 3}\n```'
    assert parse_answer_json(answer) == {"b": 2}
    with pytest.raises(NotJson, match="answer is not valid JSON"):
        parse_answer_json(answer, allow_fence=False)


@pytest.mark.parametrize(
    ("value", "name", "types"),
    [
        (None, "null", {"null"}),
        (True, "boolean", {"boolean"}),
        (3, "integer", {"integer", "number"}),
        (3.0, "integer", {"integer", "number"}),
        (3.5, "number", {"number"}),
        ("x", "string", {"string"}),
        ([], "array", {"array"}),
        ({}, "object", {"object"}),
    ],
)
def test_json_type_names(value: Any, name: str, types: set[str]) -> None:
    assert json_type_name(value) == name
    assert json_types(value) == types


def test_check_modules_import_jsonschema_and_jsonpath_lazily() -> None:
    code = (
        "import sys, benchyard.checks.registry as r; r.check_types(); "
        "print(sorted(m for m in sys.modules if m.startswith(('jsonschema', 'jsonpath_ng'))))"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert output.stdout.strip() == "[]"


@pytest.mark.parametrize("depth", [101, 100_000])
def test_json_nested_too_deep_is_not_json_rather_than_a_crash(depth: int) -> None:
    # 100,000 levels made json.loads raise RecursionError: an uncounted harness error
    with pytest.raises(NotJson, match="nested over 100 levels"):
        parse_answer_json("[" * depth + "]" * depth)
    assert parse_answer_json("[" * 99 + "]" * 99) is not None
