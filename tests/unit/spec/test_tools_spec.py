"""Scenario tools are validated at load time; each problem names its file, line and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchyard.benchmarks.loader import load_benchmark
from benchyard.spec.problems import BenchmarkInvalid
from benchyard.spec.tools import ToolSpec, arguments_match
from tests.support import write_benchmark

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def problems(tmp_path: Path, **scenario: Any) -> list[str]:
    base: dict[str, Any] = {
        "id": "t",
        "stimulus": "q",
        "checks": [{"type": "equals", "value": "x"}],
    }
    bench = write_benchmark(tmp_path / "bench", [{**base, **scenario}])
    with pytest.raises(BenchmarkInvalid) as error:
        load_benchmark(bench)
    return [str(problem) for problem in error.value.problems]


def test_tool_problems_name_the_field(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        tools=[
            {"name": "get weather", "result": "x"},
            {"name": "lookup", "parameters": {"type": "array"}, "result": "x"},
            {"name": "silent"},
            {"name": "both", "responses": [{"result": 1, "error": "e"}]},
            {
                "name": "typo",
                "parameters": CITY,
                "responses": [{"when": {"town": "Paris"}, "result": 1}],
            },
        ],
    )
    assert found == [
        "scenarios/main.yaml:7: tools[0].name: 'get weather' is not a valid tool name (a letter "
        "or '_', then letters, digits, '_' or '-'; at most 64 characters)",
        "scenarios/main.yaml:10: tools[1].parameters: the arguments schema must have type: object",
        "scenarios/main.yaml:13: tools[2]: tool 'silent' needs a 'result', an 'error' or 'responses'",
        "scenarios/main.yaml:16: tools[3].responses[0]: give exactly one of 'result' or 'error'",
        "scenarios/main.yaml:18: tools[4]: responses[0].when: 'town' not among the parameters of "
        "'typo' (city)",
    ]


def test_reference_calls_must_name_offered_tools(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        tools=[{"name": "lookup", "result": "x"}, {"name": "lookup", "result": "y"}],
        reference={
            "answer": "x",
            "tool_calls": [{"name": "lookpu"}, {"name": "lookup", "turn": 3}],
        },
    )
    assert "scenarios/main.yaml:9: tools[1].name: tool 'lookup' is defined twice" in found
    assert any(
        "reference.tool_calls[0].name: no tool named 'lookpu' (tools: lookup, lookup)" in p
        for p in found
    )
    assert any(
        "reference.tool_calls[1].turn: turn 3 does not exist: the stimulus has 1 user turn" in p
        for p in found
    )


def test_a_bad_json_schema_is_reported(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integr"}}}
    (problem,) = problems(tmp_path, tools=[{"name": "n", "parameters": schema, "result": 1}])
    assert "tools[0].parameters: invalid JSON Schema at $.properties.n.type" in problem


def test_responses_match_on_arguments() -> None:
    tool = ToolSpec.model_validate(
        {
            "name": "get_weather",
            "parameters": CITY,
            "responses": [
                {"when": {"city": "Paris"}, "result": {"temp_c": 18}},
                {"when": {"city": "Atlantis"}, "error": "unknown city"},
            ],
        }
    )
    assert tool.respond({"city": " paris "}) == ('{"temp_c": 18}', False)
    assert tool.respond({"city": "Atlantis"}) == ("unknown city", True)
    assert tool.respond({"city": "Rome"}) == ('no result for the arguments {"city": "Rome"}', True)


@pytest.mark.parametrize(
    ("expected", "actual", "exact", "matches"),
    [
        ({"n": 1}, {"n": 1.0, "m": 2}, False, True),
        ({"n": 1}, {"n": 1.0, "m": 2}, True, False),
        ({"flag": True}, {"flag": 1}, False, False),
        ({"tags": ["A", "b"]}, {"tags": ["a", "B"]}, False, True),
        ({"where": {"city": "Oslo"}}, {"where": {"city": "oslo", "zip": 1}}, False, False),
        ({"city": "Oslo"}, {}, False, False),
    ],
)
def test_arguments_match(
    expected: dict[str, Any], actual: dict[str, Any], exact: bool, matches: bool
) -> None:
    assert arguments_match(expected, actual, exact=exact) is matches
