"""`contains_json`: a JSON object or array embedded in the answer's prose, optionally valid against a
JSON Schema.

The answer is scanned left to right: at each `{` or `[`, a JSON value is read as far as it goes;
a value that reads whole is a candidate and the scan goes on after it, anything else moves on one
character. Candidates nested over answer_json.MAX_DEPTH levels are refused whole (their inner parts
are not tried), as everywhere an answer's JSON is read, and the scan gives up after a bounded amount
of work, so that no answer can make it slow.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, field_validator

from benchyard.checks.answer_json import DECODER, MAX_DEPTH, NotJson, json_type_name, nesting_depth
from benchyard.checks.answer_text import clip, quote
from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.json_checks import SHOWN_ERRORS, show
from benchyard.checks.registry import check

MAX_STARTS = 2_000  # `{` and `[` tried as the start of a value
MAX_SCANNED_CHARS = 16 * 1024 * 1024  # characters read by the attempts that failed, together
SHOWN_CANDIDATES = 3


class ContainsJsonParams(CheckParams):
    schema_: dict[str, Any] | None = Field(
        default=None,
        alias="schema",
        description="A JSON Schema (any draft) that one of the embedded values must satisfy.",
    )

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        from jsonschema import SchemaError
        from jsonschema.validators import validator_for

        if schema is None:
            return None
        try:
            validator_for(schema).check_schema(schema)
        except SchemaError as error:
            message = f"not a valid JSON Schema at {error.json_path}: {error.message}"
            raise ValueError(message) from None
        return schema


@dataclass(frozen=True)
class Found:
    """A JSON value found in the answer: where it starts (0-based) and the value."""

    start: int
    value: Any


@dataclass
class Scan:
    """What the scan found, and what it set aside."""

    found: list[Found]
    too_deep: int = 0  # values refused for nesting over MAX_DEPTH
    unreadable: list[str] = field(default_factory=list)  # values refused: NaN, 1e999, huge ints
    gave_up_at: int | None = None  # where the scan stopped for its work bound


def embedded_json(text: str) -> Scan:
    """Every JSON object or array in `text`, left to right, not overlapping (see the module)."""
    scan = Scan(found=[])
    position, starts, scanned = 0, 0, 0
    while True:
        position = _next_start(text, position)
        if position < 0:
            return scan
        starts += 1
        if starts > MAX_STARTS or scanned > MAX_SCANNED_CHARS:
            scan.gave_up_at = position
            return scan
        try:
            value, end = DECODER.raw_decode(text, position)
        except NotJson as refused:  # a number JSON or Python cannot hold: refused whole
            scan.unreadable.append(str(refused))
            end = _structure_end(text, position)
            scanned += end - position
            position = end
            continue
        except json.JSONDecodeError as error:
            scanned += max(error.pos - position, 1)
            position += 1
            continue
        except RecursionError:  # far deeper than MAX_DEPTH: refused whole, as below
            scan.too_deep += 1
            end = _structure_end(text, position)
            scanned += end - position
            position = end
            continue
        if nesting_depth(value) > MAX_DEPTH:
            scan.too_deep += 1  # refused whole: its inner values are not candidates either
        else:
            scan.found.append(Found(position, value))
        position = end


_STRUCTURE = re.compile(r'[\[\]{}"\\]')


def _structure_end(text: str, start: int) -> int:
    """Where the brackets opened at `start` close (the end of the text when they never do),
    strings skipped; without recursion, for values too deep for the parser."""
    depth, in_string, escaped_at = 0, False, -1
    for match in _STRUCTURE.finditer(text, start):
        char, at = match.group(), match.start()
        if in_string:
            if char == "\\" and escaped_at != at:
                escaped_at = at + 1
            elif char == '"' and escaped_at != at:
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return at + 1
    return len(text)


def _next_start(text: str, position: int) -> int:
    braces, brackets = text.find("{", position), text.find("[", position)
    if braces < 0 or brackets < 0:
        return max(braces, brackets)
    return min(braces, brackets)


def _where(text: str, found: Found) -> str:
    line = text.count("\n", 0, found.start) + 1
    return f"a JSON {json_type_name(found.value)} at line {line}"


def _not_found(scan: Scan, answer: str) -> str:
    reason = "no JSON object or array in the answer"
    notes = []
    if scan.too_deep:
        notes.append(f"{scan.too_deep} value(s) refused for nesting over {MAX_DEPTH} levels")
    if scan.unreadable:
        notes.append(f"{len(scan.unreadable)} value(s) refused: {scan.unreadable[0]}")
    if scan.gave_up_at is not None:
        notes.append(f"scan stopped at character {scan.gave_up_at} (too many candidates)")
    if notes:
        reason += f" ({'; '.join(notes)})"
    return f"{reason}: {quote(answer.strip())}"


@check("contains_json", ContainsJsonParams)
def contains_json(params: ContainsJsonParams, evidence: Evidence) -> CheckResult:
    """The answer contains a JSON object or array (in prose or a fence), valid against a schema."""
    answer = evidence.answer
    scan = embedded_json(answer)
    if not scan.found:
        return CheckResult.of(False, _not_found(scan, answer))
    if params.schema_ is None:
        first = scan.found[0]
        count = f" (and {len(scan.found) - 1} more)" if len(scan.found) > 1 else ""
        return CheckResult.of(True, f"found {_where(answer, first)}{count}: {show(first.value)}")
    return _against_schema(params.schema_, scan, answer)


def _against_schema(schema: dict[str, Any], scan: Scan, answer: str) -> CheckResult:
    failures: list[tuple[Found, list[str]]] = []
    for found, errors in _validated(schema, scan.found):
        if not errors:
            return CheckResult.of(
                True, f"{_where(answer, found)} is valid against the schema: {show(found.value)}"
            )
        failures.append((found, errors))
    shown = "; ".join(
        f"{_where(answer, found)} {show(found.value)}: {', '.join(errors)}"
        for found, errors in failures[:SHOWN_CANDIDATES]
    )
    more = (
        f" (+{len(failures) - SHOWN_CANDIDATES} more)" if len(failures) > SHOWN_CANDIDATES else ""
    )
    return CheckResult.of(
        False,
        f"none of the {len(failures)} JSON value(s) found satisfies the schema: {shown}{more}",
    )


def _validated(schema: dict[str, Any], found: list[Found]) -> Iterator[tuple[Found, list[str]]]:
    """Each value with its schema errors (the first few, as `path: message`)."""
    from jsonschema.validators import validator_for

    validator_class = validator_for(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    for item in found:
        errors = sorted(validator.iter_errors(item.value), key=lambda error: error.json_path)
        texts = [f"{e.json_path}: {clip(e.message)}" for e in errors[:SHOWN_ERRORS]]
        if len(errors) > SHOWN_ERRORS:
            texts.append(f"+{len(errors) - SHOWN_ERRORS} more")
        yield item, texts
