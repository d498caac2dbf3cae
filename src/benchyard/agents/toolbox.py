"""Answering an agent's tool calls from the scenario's fixtures, recording each call and result.

The same ToolBox serves the `openai` agent's loop, the tool server that command agents reach over
loopback HTTP, and the oracle's replay of a reference's calls, so all three leave the same events.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from benchyard.agents.environments import Tool
from benchyard.runner.tool_events import call_event, result_event
from benchyard.runner.trajectory import Event

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from benchyard.spec.models import Scenario

SHOWN_SCHEMA_ERRORS = 2


@dataclass(frozen=True)
class ToolAnswer:
    text: str
    error: bool
    call_id: str


@dataclass
class ToolBox:
    """The scenario's tools for one attempt; every call lands in `sink` as a tool_call and a
    tool_result event."""

    tools: Sequence[Tool]
    sink: list[Event]
    turn: int = 1
    calls: int = field(default=0, init=False)

    @classmethod
    def for_scenario(cls, scenario: Scenario, sink: list[Event]) -> ToolBox:
        """The scenario's fixture tools, and the simulated tools of its environment (a fresh
        one for this attempt; agents/environments.py): the plugin point for tools that a
        simulator answers rather than canned responses."""
        tools: list[Tool] = list(scenario.tools)
        if scenario.environment is not None:
            from benchyard.agents.environments import environment_tools

            tools += environment_tools(scenario.environment)
        return cls(tools, sink)

    @cached_property
    def _by_name(self) -> dict[str, Tool]:
        return {tool.name: tool for tool in self.tools}

    @cached_property
    def _validators(self) -> dict[str, Validator]:
        from jsonschema.validators import validator_for

        return {tool.name: validator_for(tool.parameters)(tool.parameters) for tool in self.tools}

    def definitions(self) -> list[dict[str, Any]]:
        """The tools as an OpenAI-compatible `tools` list."""
        return [tool.definition() for tool in self.tools]

    def call(self, name: str, arguments: str | dict[str, Any]) -> ToolAnswer:
        """Answer one call; `arguments` may be the JSON text a model wrote. Bad calls get an error
        result (the agent's mistake, shown to it), never an exception."""
        self.calls += 1
        call_id = f"call-{self.calls}"
        parsed, problem = _arguments(arguments)
        self.sink.append(call_event(name, parsed, call_id, self.turn, arguments_error=problem))
        tool = self._by_name.get(name)
        if tool is None:
            offered = ", ".join(self._by_name) or "none"
            text, error = f"no tool named '{name}' (tools: {offered})", True
        elif problem is not None:
            text, error = problem, True
        else:
            schema_problem = self._schema_problem(name, parsed)
            text, error = (schema_problem, True) if schema_problem else tool.respond(parsed)
        self.sink.append(result_event(name, text, call_id, error=error))
        return ToolAnswer(text, error, call_id)

    def _schema_problem(self, name: str, arguments: dict[str, Any]) -> str | None:
        errors = sorted(self._validators[name].iter_errors(arguments), key=lambda e: e.path)
        if not errors:
            return None
        shown = "; ".join(
            f"{error.json_path}: {error.message}" for error in errors[:SHOWN_SCHEMA_ERRORS]
        )
        return f"invalid arguments for {name}: {shown}"


def _arguments(raw: str | dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The arguments object, or a problem to report back to the agent."""
    if isinstance(raw, dict):
        return raw, None
    try:
        value = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as error:
        return {}, f"the arguments are not valid JSON ({error})"
    except RecursionError:
        return {}, "the arguments are nested too deep"
    if not isinstance(value, dict):
        return {}, "the arguments must be a JSON object"
    return value, None
