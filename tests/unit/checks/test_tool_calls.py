"""`is_valid_tool_call`: observed calls (recorded by the real ToolBox) and tool-call JSON answers,
checked against the scenario's tools or the check's own OpenAI `tools` entries."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchyard.agents.toolbox import ToolBox
from benchyard.checks.base import CheckFailedToRun, CheckResult, Evidence
from benchyard.runner.trajectory import Event
from benchyard.spec.models import Scenario

from .helpers import check_type, params_error

WEATHER = {
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "responses": [{"when": {"city": "Atlantis"}, "error": "unknown city"}, {"result": "sunny"}],
}
SCENARIO = Scenario.model_validate(
    {"id": "s", "stimulus": "q", "tools": [WEATHER], "checks": [{"type": "equals", "value": "x"}]}
)
BARE = Scenario.model_validate(
    {"id": "s", "stimulus": "q", "checks": [{"type": "equals", "value": "x"}]}
)


def observed(*calls: tuple[str, str | dict[str, Any]]) -> list[Event]:
    """The events benchyard's own ToolBox records when an agent makes these calls."""
    events: list[Event] = [Event(kind="message", role="user", content="q")]
    box = ToolBox(list(SCENARIO.tools), events)
    for name, arguments in calls:
        box.call(name, arguments)
    return events


def check(
    answer: str = "",
    events: list[Event] | None = None,
    scenario: Scenario = SCENARIO,
    **params: Any,
) -> CheckResult:
    kind = check_type("is_valid_tool_call")
    evidence = Evidence(answer, scenario, trajectory=events or [])
    result = kind.evaluate(kind.params.model_validate(params), evidence)
    assert isinstance(result, CheckResult)
    return result


def openai_call(name: str, arguments: Any, **extra: Any) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "id": "call_1",
        "type": "function",
        "function": {"name": name, "arguments": text},
        **extra,
    }


def test_observed_valid_calls_pass_even_when_the_tool_answers_an_error() -> None:
    events = observed(("get_weather", '{"city": "Oslo"}'), ("get_weather", {"city": "Atlantis"}))
    result = check(events=events)
    assert result.passed
    assert result.reason == "2 valid tool call(s) observed: get_weather, get_weather"


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ("{city: Oslo}", "call 1: get_weather: the arguments are not valid JSON ("),
        ('["Oslo"]', "call 1: get_weather: the arguments must be a JSON object"),
        ('{"city": 7}', "call 1: get_weather: arguments do not fit its schema: $.city: 7 is not"),
        ('{"city": "Oslo", "unit": "C"}', "Additional properties are not allowed ('unit'"),
        ("{}", "$: 'city' is a required property"),
    ],
)
def test_observed_calls_with_bad_arguments_fail(arguments: str, problem: str) -> None:
    result = check(events=observed(("get_weather", '{"city": "Oslo"}'), ("get_weather", arguments)))
    assert not result.passed
    assert result.score == 0.5
    assert result.reason.startswith("1 of 2 tool call(s) observed valid: ")
    assert problem.replace("call 1", "call 2") in result.reason


def test_observed_call_to_an_undeclared_tool_fails() -> None:
    result = check(events=observed(("get_wether", '{"city": "Oslo"}')))
    assert not result.passed
    assert result.reason == (
        "0 of 1 tool call(s) observed valid: call 1: no tool named 'get_wether' (tools: get_weather)"
    )


def test_calls_an_agent_only_logged_do_not_count() -> None:
    logged = Event(kind="tool_call", content="get_weather(...)", data={"source": "agent"})
    result = check(events=[logged])
    assert not result.passed
    assert result.reason.startswith("no tool call observed, and the answer is not tool-call JSON")


@pytest.mark.parametrize(
    "answer",
    [
        json.dumps(
            {"role": "assistant", "tool_calls": [openai_call("get_weather", {"city": "Oslo"})]}
        ),
        json.dumps([openai_call("get_weather", {"city": "Oslo", "days": 2})]),
        json.dumps(openai_call("get_weather", {"city": "Oslo"})),
        "```json\n" + json.dumps(openai_call("get_weather", {"city": "Oslo"})) + "\n```",
        json.dumps({"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}),
    ],
)
def test_answers_in_the_openai_shape_pass(answer: str) -> None:
    result = check(answer)
    assert result.passed, result.reason
    assert result.reason.startswith("1 valid tool call(s) in the answer: get_weather")


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ('{"name": "get_weather", "arguments": "{}"}', 'call 1: no "function" object'),
        (json.dumps(openai_call("get_weather", {"city": "Oslo"}, type="tool")), '"type" is "tool"'),
        (json.dumps({"function": {"name": "get_weather"}}), "call 1: function has no arguments"),
        (
            json.dumps(openai_call("get_weather", '{"city": ')),
            "function.arguments is not valid JSON",
        ),
        (
            json.dumps(openai_call("get_weather", "[1]")),
            "function.arguments is [1], not a JSON object",
        ),
        (json.dumps(openai_call(7, {})), "function.name is 7, not a tool name"),
        (json.dumps({"tool_calls": "get_weather"}), 'tool_calls is "get_weather", not a list'),
        ("I would call get_weather for Oslo.", "the answer is not tool-call JSON"),
    ],
)
def test_answers_of_the_wrong_shape_fail(answer: str, problem: str) -> None:
    result = check(answer, source="answer")
    assert not result.passed
    assert problem in result.reason


def test_auto_prefers_observed_calls_over_the_answer() -> None:
    answer = json.dumps(openai_call("get_weather", {"city": "Oslo"}))
    result = check(answer, events=observed(("get_weather", '{"city": 1}')))
    assert not result.passed
    assert "observed" in result.reason
    assert check(answer, events=observed(("get_weather", '{"city": 1}')), source="answer").passed


def test_min_calls() -> None:
    answer = json.dumps([openai_call("get_weather", {"city": "Oslo"})])
    result = check(answer, min_calls=2)
    assert not result.passed
    assert result.score == 0.5
    assert result.reason == (
        "1 of 1 tool call(s) in the answer valid: expected at least 2 tool call(s)"
    )
    none_needed = check("No tool needed: it is 4.", min_calls=0)
    assert none_needed.passed
    assert none_needed.reason.startswith("no tool call, and none required (no tool call observed")


def test_tools_given_in_the_check_replace_the_scenarios() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "add",
                "strict": True,
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"],
                },
            },
        }
    ]
    good = json.dumps([openai_call("add", {"a": 1, "b": 2})])
    assert check(good, scenario=BARE, tools=tools).passed
    bad = json.dumps([openai_call("add", {"a": 1})])
    result = check(bad, scenario=BARE, tools=tools)
    assert not result.passed
    assert "call 1: add: arguments do not fit its schema: $: 'b' is a required property" in (
        result.reason
    )


def test_without_any_tools_the_check_cannot_run() -> None:
    with pytest.raises(CheckFailedToRun, match="the scenario declares none"):
        check("{}", scenario=BARE)


def test_bad_parameters_are_load_time_errors() -> None:
    assert "Input should be 'auto', 'trajectory' or 'answer'" in params_error(
        "is_valid_tool_call", source="trace"
    )
    bad_schema = [{"type": "function", "function": {"name": "f", "parameters": {"type": "list"}}}]
    assert "the arguments schema must have type: object" in params_error(
        "is_valid_tool_call", tools=bad_schema
    )
    assert "Extra inputs are not permitted" in params_error("is_valid_tool_call", strict=True)
