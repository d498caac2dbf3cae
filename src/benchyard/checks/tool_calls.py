"""`is_valid_tool_call`: the agent's tool calls have the OpenAI tool-call shape and fit the declared
tools: a known name, arguments that are a JSON object valid against the tool's JSON Schema.

The calls are those benchyard observed (answered itself, see runner/tool_events.py), or the answer
written as tool-call JSON: an assistant message `{"tool_calls": [...]}`, a list of calls, or one
call, each `{"id": ..., "type": "function", "function": {"name": ..., "arguments": "<JSON text>"}}`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from benchyard.checks.answer_json import MAX_DEPTH, NotJson, nesting_depth, parse_answer_json
from benchyard.checks.answer_text import clip
from benchyard.checks.base import CheckFailedToRun, CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check
from benchyard.spec.tools import ToolSpec

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from benchyard.agents.environments import Tool

Source = Literal["auto", "trajectory", "answer"]
SHOWN_PROBLEMS = 4
SHOWN_ERRORS = 2


class ToolDefinition(CheckParams):
    """A tool as an OpenAI `tools` entry: `{type: function, function: {name, parameters}}`."""

    type: Literal["function"] = "function"
    function: ToolSpec

    @field_validator("function", mode="before")
    @classmethod
    def _signature_only(cls, value: Any) -> Any:
        """A definition has no fixture responses (give the spec one, so that it validates), and
        may say `strict` (OpenAI's structured outputs), which changes nothing here."""
        if isinstance(value, dict):
            value = {key: item for key, item in value.items() if key != "strict"}
            if not {"result", "error", "responses"} & value.keys():
                value["result"] = None
        return value


class ValidToolCallParams(CheckParams):
    source: Source = Field(
        default="auto",
        description="trajectory: the calls benchyard observed; answer: the answer as tool-call "
        "JSON; auto: the observed calls when there are any, else the answer.",
    )
    tools: list[ToolDefinition] | None = Field(
        default=None,
        description="OpenAI `tools` entries to check against, instead of the scenario's tools.",
    )
    min_calls: int = Field(default=1, ge=0, description="At least this many calls.")


@dataclass(frozen=True)
class Call:
    """A tool call to check: the name, and the arguments as written (text or an object), or why
    the arguments could not be read."""

    name: Any
    arguments: Any
    arguments_error: str | None = None


@dataclass(frozen=True)
class Calls:
    calls: list[Call]
    where: str  # "observed" or "in the answer"
    shape_problems: list[str]  # calls in the answer that are not tool calls at all


class Tools:
    """The declared tools, with their argument validators built once."""

    def __init__(self, specs: Sequence[Tool]) -> None:
        self.by_name = {spec.name: spec for spec in specs}

    @cached_property
    def validators(self) -> dict[str, Validator]:
        from jsonschema.validators import validator_for

        return {name: validator_for(s.parameters)(s.parameters) for name, s in self.by_name.items()}

    def problem(self, call: Call) -> str | None:
        """Why the call does not fit the tools; None when it does."""
        if not isinstance(call.name, str) or not call.name:
            return f"function.name is {_show(call.name)}, not a tool name"
        if call.name not in self.by_name:
            return f"no tool named {call.name!r} (tools: {', '.join(self.by_name)})"
        if call.arguments_error is not None:
            return f"{call.name}: {call.arguments_error}"
        arguments, problem = _arguments(call.arguments)
        if problem is not None:
            return f"{call.name}: {problem}"
        errors = sorted(self.validators[call.name].iter_errors(arguments), key=lambda e: e.path)
        if errors:
            shown = "; ".join(f"{e.json_path}: {clip(e.message)}" for e in errors[:SHOWN_ERRORS])
            return f"{call.name}: arguments do not fit its schema: {shown}"
        return None


def _arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """The arguments object: JSON text holding an object (OpenAI's shape) or an object."""
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as error:
            return {}, f"function.arguments is not valid JSON ({error})"
        except RecursionError:
            return {}, f"function.arguments is nested over {MAX_DEPTH} levels deep"
    if not isinstance(value, dict):
        return {}, f"function.arguments is {_show(value)}, not a JSON object"
    if nesting_depth(value) > MAX_DEPTH:
        return {}, f"function.arguments is nested over {MAX_DEPTH} levels deep"
    return value, None


def _show(value: Any) -> str:
    return clip(json.dumps(value, ensure_ascii=False), 40)


def _observed(evidence: Evidence) -> list[Call]:
    """The calls benchyard answered itself (the events tools.py counts too), never calls an agent
    only logged; arguments it could not read carry why."""
    calls = []
    for event in evidence.trajectory:
        data = event.data or {}
        if event.kind == "tool_call" and "tool" in data and "call_id" in data:
            error = data.get("arguments_error")
            calls.append(
                Call(
                    str(data["tool"]), data.get("arguments"), None if error is None else str(error)
                )
            )
    return calls


def _from_answer(answer: str) -> tuple[list[Call], list[str]] | str:
    """The calls written in the answer, with shape problems; or why there are none."""
    try:
        data = parse_answer_json(answer)
    except NotJson as error:
        return f"the answer is not tool-call JSON: {error}"
    if isinstance(data, dict) and "tool_calls" in data:
        data = data["tool_calls"]
        if not isinstance(data, list):
            return f"tool_calls is {_show(data)}, not a list of calls"
    items = data if isinstance(data, list) else [data]
    calls, problems = [], []
    for index, item in enumerate(items, start=1):
        shaped = _shaped(item)
        if isinstance(shaped, str):
            problems.append(f"call {index}: {shaped}")
        else:
            calls.append(shaped)
    return calls, problems


def _shaped(item: Any) -> Call | str:
    """A call in OpenAI's shape, or what is wrong with its shape."""
    if not isinstance(item, dict):
        return f"{_show(item)} is not a tool call object"
    function = item.get("function")
    if not isinstance(function, dict):
        return 'no "function" object (OpenAI shape: {"type": "function", "function": {...}})'
    if "type" in item and item["type"] != "function":
        return f'"type" is {_show(item["type"])}, not "function"'
    if "id" in item and not isinstance(item["id"], str):
        return f'"id" is {_show(item["id"])}, not a string'
    missing = [key for key in ("name", "arguments") if key not in function]
    if missing:
        return f"function has no {' or '.join(missing)}"
    return Call(function["name"], function["arguments"])


def _calls(params: ValidToolCallParams, evidence: Evidence) -> Calls | str:
    observed = _observed(evidence)
    if params.source == "trajectory" or (params.source == "auto" and observed):
        return Calls(observed, "observed", [])
    read = _from_answer(evidence.answer)
    if isinstance(read, str):
        if params.source == "auto":
            return f"no tool call observed, and {read}"
        return read
    return Calls(read[0], "in the answer", read[1])


def _tools(params: ValidToolCallParams, evidence: Evidence) -> Tools:
    """The check's own tools, else those the agent was offered: the scenario's fixture tools and
    its environment's (as the ToolBox serves them)."""
    from benchyard.agents.toolbox import ToolBox

    if params.tools is not None:
        return Tools([definition.function for definition in params.tools])
    offered = ToolBox.for_scenario(evidence.scenario, []).tools
    if not offered:
        raise CheckFailedToRun(
            "is_valid_tool_call needs tools to check against: the scenario declares none and "
            "the check gives no 'tools'"
        )
    return Tools(offered)


def _problems(calls: Calls, tools: Tools) -> list[str]:
    problems = list(calls.shape_problems)
    for index, call in enumerate(calls.calls, start=1):
        problem = tools.problem(call)
        if problem is not None:
            problems.append(f"call {index}: {problem}")
    return problems


@check("is_valid_tool_call", ValidToolCallParams)
def is_valid_tool_call(params: ValidToolCallParams, evidence: Evidence) -> CheckResult:
    """The tool calls (observed, or written as the answer) fit the declared tools' schemas."""
    tools = _tools(params, evidence)
    calls = _calls(params, evidence)
    if isinstance(calls, str):
        if params.min_calls == 0:
            return CheckResult.of(True, f"no tool call, and none required ({calls})")
        return CheckResult.of(False, f"{calls}; expected at least {params.min_calls} tool call(s)")
    problems = _problems(calls, tools)
    total = len(calls.calls) + len(calls.shape_problems)
    valid = total - len(problems)
    if total < params.min_calls:
        problems.append(f"expected at least {params.min_calls} tool call(s)")
    if not problems:
        names = ", ".join(str(call.name) for call in calls.calls) or "none"
        return CheckResult.of(True, f"{total} valid tool call(s) {calls.where}: {names}")
    score = valid / max(total, params.min_calls)
    shown = "; ".join(problems[:SHOWN_PROBLEMS])
    more = f" (+{len(problems) - SHOWN_PROBLEMS} more)" if len(problems) > SHOWN_PROBLEMS else ""
    return CheckResult(
        False,
        round(score, 6),
        f"{valid} of {total} tool call(s) {calls.where} valid: {shown}{more}",
    )
