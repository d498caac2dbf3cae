"""Checks on JSON answers: well-formed, valid against a JSON Schema, or a value at a JSONPath."""

from __future__ import annotations

import functools
import json
import operator
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import Field, field_validator, model_validator

from benchyard.checks.answer_json import NotJson, is_number, json_types, parse_answer_json
from benchyard.checks.answer_text import clip
from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check

if TYPE_CHECKING:
    from jsonpath_ng.jsonpath import JSONPath

JsonType = Literal["string", "number", "integer", "boolean", "array", "object", "null"]
JSON_TYPES: frozenset[str] = frozenset(get_args(JsonType))
Op = Literal[
    "eq", "ne", "contains", "regex", "gt", "gte", "lt", "lte", "in", "exists", "type", "length"
]
ORDER_OPS = {"gt": operator.gt, "gte": operator.ge, "lt": operator.lt, "lte": operator.le}
SHOWN_ERRORS = 3
SHOWN_VALUE_LIMIT = 40
SHOWN_VALUES = 5

AllowFence = Annotated[bool, Field(description="Also accept JSON inside a ```json fenced block.")]


class JsonValidParams(CheckParams):
    allow_fence: AllowFence = True


class JsonSchemaParams(CheckParams):
    schema_: dict[str, Any] = Field(alias="schema", description="A JSON Schema (any draft).")
    allow_fence: AllowFence = True

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        from jsonschema import SchemaError
        from jsonschema.validators import validator_for

        try:
            validator_for(schema).check_schema(schema)
        except SchemaError as error:
            message = f"not a valid JSON Schema at {error.json_path}: {error.message}"
            raise ValueError(message) from None
        return schema


class OutputMatchParams(CheckParams):
    path: str = Field(description="A JSONPath into the answer's JSON, e.g. $.items[*].price.")
    op: Op = "eq"
    value: Any = None
    match: Literal["any", "all"] = Field(
        default="any", description="When the path matches several nodes: any, or all, must pass."
    )
    allow_fence: AllowFence = True

    @field_validator("path")
    @classmethod
    def _path_parses(cls, path: str) -> str:
        from jsonpath_ng.exceptions import JSONPathError

        try:
            compile_path(path)
        except JSONPathError as error:
            raise ValueError(f"invalid JSONPath: {error}") from None
        return path

    @model_validator(mode="after")
    def _value_fits_op(self) -> OutputMatchParams:
        problem = _value_problem(self.op, self.value, given="value" in self.model_fields_set)
        if problem:
            raise ValueError(problem)
        return self


@functools.lru_cache(maxsize=256)
def compile_path(path: str) -> JSONPath:
    """The parsed JSONPath (extended syntax: filters such as [?(@.price > 10)])."""
    from jsonpath_ng.ext.parser import parse

    return parse(path)


def _value_problem(op: Op, value: Any, given: bool) -> str | None:
    if op == "exists":
        valid = value is None or isinstance(value, bool)
        return None if valid else "op 'exists' takes true or false as 'value'"
    if not given:
        return f"op {op!r} needs a 'value'"
    if op in ORDER_OPS and not is_number(value):
        return f"op {op!r} needs a number as 'value', not {value!r}"
    if op == "in" and not isinstance(value, list):
        return f"op 'in' needs a list as 'value', not {value!r}"
    if op == "type" and value not in JSON_TYPES:
        return f"op 'type' needs one of {', '.join(sorted(JSON_TYPES))} as 'value', not {value!r}"
    if op == "length" and not (type(value) is int and value >= 0):
        return f"op 'length' needs a whole number >= 0 as 'value', not {value!r}"
    if op == "regex":
        return _regex_problem(value)
    return None


def _regex_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"op 'regex' needs a pattern string as 'value', not {value!r}"
    try:
        re.compile(value)
    except re.error as error:
        return f"invalid regular expression in 'value': {error}"
    return None


def json_equal(left: Any, right: Any) -> bool:
    """Equality as JSON sees it: 1 == 1.0, but true != 1."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(json_equal, left, right))
    return bool(left == right)


def _contains(node: Any, value: Any) -> bool:
    if isinstance(node, str):
        return isinstance(value, str) and value in node
    if isinstance(node, list):
        return any(json_equal(item, value) for item in node)
    return isinstance(node, dict) and isinstance(value, str) and value in node


def _ordered(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda node, value: is_number(node) and compare(node, value)


PREDICATES: dict[str, Callable[[Any, Any], bool]] = {
    "eq": json_equal,
    "ne": lambda node, value: not json_equal(node, value),
    "contains": _contains,
    "regex": lambda node, value: isinstance(node, str) and re.search(value, node) is not None,
    **{op: _ordered(compare) for op, compare in ORDER_OPS.items()},
    "in": lambda node, value: any(json_equal(node, option) for option in value),
    "type": lambda node, value: value in json_types(node),
    "length": lambda node, value: isinstance(node, str | list | dict) and len(node) == value,
}
OP_WORDS = {
    "eq": "equal to",
    "ne": "not equal to",
    "contains": "containing",
    "regex": "matching",
    "gt": "greater than",
    "gte": "at least",
    "lt": "less than",
    "lte": "at most",
    "in": "one of",
    "type": "of type",
    "length": "of length",
}


def show(value: Any) -> str:
    """A JSON value as compact text, clipped for a reason."""
    return clip(json.dumps(value, ensure_ascii=False), SHOWN_VALUE_LIMIT)


def _show_all(values: list[Any]) -> str:
    shown = ", ".join(show(value) for value in values[:SHOWN_VALUES])
    return shown + (f" (+{len(values) - SHOWN_VALUES} more)" if len(values) > SHOWN_VALUES else "")


@check("json_valid", JsonValidParams)
def json_valid(params: JsonValidParams, evidence: Evidence) -> CheckResult:
    """The answer is valid JSON (optionally inside a ```json fenced block)."""
    try:
        data = parse_answer_json(evidence.answer, params.allow_fence)
    except NotJson as error:
        return CheckResult.of(False, str(error))
    return CheckResult.of(True, f"answer is valid JSON: {show(data)}")


@check("json_schema", JsonSchemaParams)
def json_schema(params: JsonSchemaParams, evidence: Evidence) -> CheckResult:
    """The answer is JSON that validates against a JSON Schema."""
    from jsonschema.validators import validator_for

    try:
        data = parse_answer_json(evidence.answer, params.allow_fence)
    except NotJson as error:
        return CheckResult.of(False, str(error))
    validator_class = validator_for(params.schema_)
    validator = validator_class(params.schema_, format_checker=validator_class.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(data), key=lambda error: error.json_path)
    if not errors:
        return CheckResult.of(True, "answer is valid against the schema")
    shown = "; ".join(f"{e.json_path}: {clip(e.message)}" for e in errors[:SHOWN_ERRORS])
    more = f" (+{len(errors) - SHOWN_ERRORS} more)" if len(errors) > SHOWN_ERRORS else ""
    return CheckResult.of(False, f"answer violates the schema: {shown}{more}")


@check("output_match", OutputMatchParams)
def output_match(params: OutputMatchParams, evidence: Evidence) -> CheckResult:
    """The value(s) at a JSONPath in the answer's JSON satisfy a comparison."""
    try:
        data = parse_answer_json(evidence.answer, params.allow_fence)
    except NotJson as error:
        return CheckResult.of(False, str(error))
    nodes = [found.value for found in compile_path(params.path).find(data)]
    if params.op == "exists":
        return _exists(params, nodes)
    if not nodes:
        return CheckResult.of(False, f"{params.path} matched nothing in {show(data)}")
    predicate = PREDICATES[params.op]
    outcomes = [(node, predicate(node, params.value)) for node in nodes]
    passing = [node for node, ok in outcomes if ok]
    failing = [node for node, ok in outcomes if not ok]
    passed = bool(passing) if params.match == "any" else not failing
    expectation = f"{OP_WORDS[params.op]} {show(params.value)}"
    if passed:
        return CheckResult.of(True, f"{params.path} = {_show_all(passing)} ({expectation})")
    scope = {"any": "some node ", "all": "every node "}[params.match] if len(nodes) > 1 else ""
    return CheckResult.of(
        False, f"{params.path} = {_show_all(failing)}; expected {scope}{expectation}"
    )


def _exists(params: OutputMatchParams, nodes: list[Any]) -> CheckResult:
    wanted = params.value is not False
    found = f"{params.path} matched {len(nodes)} node(s)"
    if nodes:
        found += f": {_show_all(nodes)}"
    if bool(nodes) == wanted:
        return CheckResult.of(True, found)
    return CheckResult.of(False, f"{found}; expected {'a match' if wanted else 'none'}")
