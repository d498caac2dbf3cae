"""JSON in an answer: read from the whole answer or its first ```json fence; JSON type names."""

from __future__ import annotations

import json
import math
from typing import Any

from benchyard.checks.answer_text import fenced_blocks, quote

JSON_FENCE_LANGUAGES = frozenset({"json", ""})


MAX_DEPTH = 100


class NotJson(ValueError):
    """The answer holds no JSON document; the message says why, for a check's reason."""


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # over Python's limit on the digits of an integer read from text
        raise NotJson(
            f"a JSON integer of {len(text.lstrip('-'))} digits is too long to read"
        ) from None


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotJson(f"the JSON number {text[:40]} is out of range (it reads as {value})")
    return value


def _constant(name: str) -> float:
    raise NotJson(f"{name} is not a JSON value (JSON has no NaN or Infinity)")


DECODER = json.JSONDecoder(parse_int=_integer, parse_float=_finite, parse_constant=_constant)
"""json's decoder, refusing what JSON has not (NaN, Infinity) and numbers Python cannot hold
(integers over its digit limit, floats out of range): an answer's values are always finite."""


def parse_answer_json(answer: str, allow_fence: bool = True) -> Any:
    """The JSON value the answer holds, or NotJson: the stripped answer, else its JSON fence."""
    try:
        return _loads(answer.strip())
    except json.JSONDecodeError as whole_error:
        if not allow_fence:
            raise _not_json(answer, whole_error) from None
        block = next((b for b in fenced_blocks(answer) if b.language in JSON_FENCE_LANGUAGES), None)
        if block is None:
            raise _not_json(answer, whole_error) from None
        try:
            return _loads(block.body)
        except json.JSONDecodeError as fence_error:
            raise NotJson(f"the ```json block is not valid JSON ({fence_error})") from None


def _loads(text: str) -> Any:
    """json.loads, refusing documents nested deeper than MAX_DEPTH: an answer of 100,000 `[`
    would otherwise end in a RecursionError, here or in the checks that walk the value."""
    try:
        value = DECODER.decode(text)
    except RecursionError:
        value = None
        too_deep = True
    else:
        too_deep = nesting_depth(value) > MAX_DEPTH
    if too_deep:
        raise NotJson(f"the answer's JSON is nested over {MAX_DEPTH} levels deep")
    return value


def nesting_depth(value: Any) -> int:
    """How deep arrays and objects nest in a parsed JSON value (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        )
        if children is not None:
            deepest = max(deepest, depth)
            stack += [(child, depth + 1) for child in children]
    return deepest


def is_number(value: Any) -> bool:
    """A JSON number: an int or a float, not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_type_name(value: Any) -> str:
    """The most specific JSON Schema type of a parsed value: "integer" for 3 and 3.0."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if is_number(value):
        return "integer" if isinstance(value, int) or value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def json_types(value: Any) -> frozenset[str]:
    """Every JSON Schema type `value` has (an integer is also a number)."""
    name = json_type_name(value)
    return frozenset({name, "number"} if name == "integer" else {name})


def _not_json(answer: str, error: json.JSONDecodeError) -> NotJson:
    return NotJson(f"answer is not valid JSON ({error}): {quote(answer.strip())}")
