"""Scenario tools: simulated functions offered to the agent, answered from fixture responses.

A tool has a JSON-schema signature and fixture responses: a static `result`, an `error`, or
`responses` matched on the call's arguments (the first whose `when` matches answers).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchyard.spec.problems import format_field

TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")


class SpecModelBase(BaseModel):
    """Unknown keys are errors, as everywhere in the format (spec.models.SpecModel imports us)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolResponse(SpecModelBase):
    """One fixture response: given when the call's arguments match `when` (always, without it)."""

    when: dict[str, Any] | None = Field(
        default=None, description="Arguments to match: the listed keys must be equal (partial)."
    )
    result: Any = None
    error: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _exactly_one_outcome(cls, value: Any) -> Any:
        if isinstance(value, dict) and ("result" in value) == ("error" in value):
            raise ValueError("give exactly one of 'result' or 'error'")
        return value

    def matches(self, arguments: dict[str, Any]) -> bool:
        return self.when is None or arguments_match(self.when, arguments, exact=False)


class ToolSpec(SpecModelBase):
    """A simulated tool: its signature (as offered to models) and its fixture responses."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}},
        description="JSON Schema of the arguments object.",
    )
    responses: list[ToolResponse] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _short_forms(cls, value: Any) -> Any:
        """`result: ...` or `error: ...` on the tool itself is one response that always applies."""
        if isinstance(value, dict) and ("result" in value or "error" in value):
            value = dict(value)
            single = {key: value.pop(key) for key in ("result", "error") if key in value}
            value["responses"] = [*value.get("responses", []), single]
        return value

    @field_validator("name")
    @classmethod
    def _name_shape(cls, name: str) -> str:
        if not TOOL_NAME.match(name):
            raise ValueError(
                f"'{name}' is not a valid tool name (a letter or '_', then letters, digits, "
                "'_' or '-'; at most 64 characters)"
            )
        return name

    @field_validator("parameters")
    @classmethod
    def _object_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        from jsonschema import SchemaError
        from jsonschema.validators import validator_for

        if schema.get("type") != "object":
            raise ValueError("the arguments schema must have type: object")
        try:
            validator_for(schema).check_schema(schema)
        except SchemaError as error:
            raise ValueError(f"invalid JSON Schema at {error.json_path}: {error.message}") from None
        return schema

    @model_validator(mode="after")
    def _responses_fit(self) -> ToolSpec:
        if not self.responses:
            raise ValueError(f"tool '{self.name}' needs a 'result', an 'error' or 'responses'")
        known = self.parameters.get("properties", {})
        for index, response in enumerate(self.responses):
            unknown = sorted(set(response.when or {}) - set(known))
            if unknown:
                where = format_field(("responses", index, "when"))
                raise ValueError(
                    f"{where}: {', '.join(map(repr, unknown))} not among the parameters of "
                    f"'{self.name}' ({', '.join(known) or 'none'})"
                )
        return self

    def definition(self) -> dict[str, Any]:
        """The tool as an OpenAI-compatible `tools` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def respond(self, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The fixture response to these arguments, as (text, is_error)."""
        for response in self.responses:
            if response.matches(arguments):
                if response.error is not None:
                    return response.error, True
                return result_text(response.result), False
        shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
        return f"no result for the arguments {shown}", True


class ReferenceCall(SpecModelBase):
    """A tool call the known-good solution makes; the oracle replays it."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    turn: int | None = Field(default=None, ge=1, description="The user turn (default the last).")


class ToolReference(SpecModelBase):
    """A reference with tool calls: the final answer(s) and the calls made on the way."""

    answer: str | list[str]
    tool_calls: list[ReferenceCall] = Field(default_factory=list)

    @field_validator("answer", mode="before")
    @classmethod
    def _numbers_as_text(cls, value: Any) -> Any:
        return numbers_as_text(value)


def numbers_as_text(value: Any) -> Any:
    """An answer written as a number means its text: `42` is "42" (in a list too)."""
    if isinstance(value, list):
        return [numbers_as_text(item) for item in value]
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


def result_text(result: Any) -> str:
    """A fixture result as the text a tool returns: strings as they are, anything else as JSON."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def arguments_match(expected: dict[str, Any], actual: dict[str, Any], *, exact: bool) -> bool:
    """`exact`: the same keys with equal values; else each expected key has an equal value.

    Values compare as JSON (1 equals 1.0, true does not equal 1); text ignores case and the
    whitespace around it, so "Paris" matches " paris".
    """
    if exact and set(expected) != set(actual):
        return False
    return all(key in actual and _same(value, actual[key]) for key, value in expected.items())


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, str) and isinstance(actual, str):
        return expected.strip().casefold() == actual.strip().casefold()
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, dict) and isinstance(actual, dict):
        return arguments_match(expected, actual, exact=True)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(map(_same, expected, actual))
    return bool(expected == actual)
