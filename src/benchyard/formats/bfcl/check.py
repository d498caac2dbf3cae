"""`function_call_ast`: the Berkeley Function Calling Leaderboard's AST checker, on the calls
benchyard observed (or on calls written in the answer, BFCL's prompt mode).

What it grades is one model reply's calls, `[{name: {param: value}}]`:

- `tool_calls` (default): the calls benchyard answered itself (runner/tool_events.py), those of the
  first model reply that made any (`calls: first_reply`, as BFCL reads one response), or all of
  them (`calls: all`). Arguments that were not a JSON object make the reply undecodable.
- `answer`: the answer's text read as a Python list of calls, as BFCL decodes prompt-mode output
  (`[f(a=1), g(b='x')]`; keyword arguments only; arithmetic on constants is computed without
  running anything). BFCL's decoder `eval`s arithmetic; benchyard computes none beyond its safety
  bounds (a whole number of 10**100 or more, a power past it not even computed; text or a list
  repeated into more than 10,000 items) and does not decode `**` arguments: a reply that is calls
  but for such values still counts as calls made (NotComputed), as the official decoder would
  decode it. Arithmetic on anything but constants
  (`len('ab') + 1`), which the official decoder runs, makes the reply undecodable here.

Then, as the official checker does (`ast_checker.py`):

- **simple**: exactly one call; **multiple**: as many calls as expected (one), checked against the
  expected function; **parallel** and **parallel_multiple**: as many calls as expected, each expected
  call matched, in its order, to the first unmatched call that passes (order-free, greedy).
- A call passes when its name is the function's (`.` written `_` for tool names, as FC models
  must), every required parameter is given, no parameter outside both the schema and the
  possible answer is, each value has the schema's type (an int where a float is expected is
  converted; a value of the possible answers' own type is a "variable" and is compared as is), and
  equals one of the possible answers: strings compared after removing spaces and `,./-_*^`,
  lower-cased, `'` as `"`; lists and dicts element by element; a parameter left out needs `""`
  among its possible answers.
- **irrelevance**: passes when the reply holds no call (or cannot be decoded as calls; a reply
  benchyard only declined to compute, NotComputed, holds calls and fails).
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import Field

from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check
from benchyard.runner.trajectory import Event

Category = Literal["simple", "multiple", "parallel", "parallel_multiple", "irrelevance"]
Call = dict[str, dict[str, Any]]  # {name: {param: value}}

PYTHON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,
    "dict": dict,
    "any": str,
}
NESTED_TYPES = ("array", "tuple")
_STANDARDIZE = re.compile(r"[ \,\.\/\-\_\*\^]")


class FunctionCallAstParams(CheckParams):
    category: Category
    functions: list[dict[str, Any]] = Field(
        default_factory=list, description="The BFCL function documents offered."
    )
    ground_truth: list[dict[str, dict[str, list[Any]]]] = Field(
        default_factory=list,
        description="BFCL's possible answers: [{function: {param: [acceptable values]}}].",
    )
    source: Literal["tool_calls", "answer"] = "tool_calls"
    calls: Literal["first_reply", "all"] = "first_reply"
    underscore_names: bool | None = Field(
        default=None,
        description="Expect `.` in function names written `_` (default: yes for tool calls, as "
        "tool names cannot hold dots; no for calls written in the answer).",
    )


@dataclass(frozen=True)
class Verdict:
    valid: bool
    error: str = ""
    error_type: str = ""


VALID = Verdict(True)


# ---- decoding --------------------------------------------------------------------------------


class Undecodable(Exception):
    """The reply is not a list of calls."""


class NotComputed(Undecodable):
    """The reply is a list of calls, but holds values that benchyard does not compute (beyond its
    safety bounds) or decode (`**` arguments), where BFCL's decoder would: calls were made, whose
    arguments are not known here."""


class _Skipped:
    """A value left uncomputed; its reason is in the decoding's `skipped` list."""


SKIPPED = _Skipped()


def decode_answer(text: str) -> list[Call]:
    """BFCL's prompt-mode decoding of a Python list of calls; NotComputed when the reply decodes
    but for values beyond benchyard's bounds."""
    skipped: list[str] = []
    calls = _decode_calls(text, skipped)
    if skipped:
        raise NotComputed("; ".join(dict.fromkeys(skipped)))
    return calls


def _decode_calls(text: str, skipped: list[str]) -> list[Call]:
    text = text.strip("`\n ")
    if not text.startswith("["):
        text = "[" + text
    if not text.endswith("]"):
        text = text + "]"
    cleaned = text.strip().strip("'")
    try:
        parsed = ast.parse(cleaned, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise Undecodable(f"not Python: {error}") from None
    body = parsed.body
    if isinstance(body, ast.Call):
        return [_call(body, skipped)]
    if not isinstance(body, ast.List | ast.Tuple | ast.Set):
        raise Undecodable("not a list of calls")
    calls = []
    for element in body.elts:
        if not isinstance(element, ast.Call):
            raise Undecodable(f"not a call: {ast.unparse(element)[:60]}")
        calls.append(_call(element, skipped))
    return calls


def _call(node: ast.Call, skipped: list[str]) -> Call:
    parts = []
    func: ast.expr = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    arguments = {}
    for keyword in node.keywords:
        if keyword.arg is None:  # BFCL's decoder keeps it, under the name None
            skipped.append("a ** argument, not decoded")
            continue
        arguments[keyword.arg] = _value(keyword.value, skipped)
    return {".".join(reversed(parts)): arguments}


def _value(node: ast.expr, skipped: list[str]) -> Any:
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.operand, ast.Constant):
            raise Undecodable("an operator on something other than a constant")
        try:
            operand: Any = node.operand.value
            return -operand  # as BFCL: any unary operator negates
        except TypeError as error:
            raise Undecodable(f"cannot negate {node.operand.value!r}: {error}") from None
    if isinstance(node, ast.List):
        return [_value(item, skipped) for item in node.elts]
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise Undecodable("** in a dict")
        try:
            return {
                _value(k, skipped): _value(v, skipped)
                for k, v in zip(node.keys, node.values, strict=True)
                if k is not None
            }
        except TypeError as error:
            raise Undecodable(f"a dict key that cannot be one: {error}") from None
    if isinstance(node, ast.BinOp):
        return _arithmetic(node, skipped)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return ast.unparse(node) if not node.keywords else _call(node, skipped)
    if isinstance(node, ast.Tuple):
        return tuple(_value(item, skipped) for item in node.elts)
    if isinstance(node, ast.Subscript):
        return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"
    raise Undecodable(f"unsupported value {type(node).__name__}")


_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_MAX_MAGNITUDE = 10**100
_MAX_POWER_BITS = 332  # a power of at least 2**333 is past _MAX_MAGNITUDE (about 2**332.2)
_MAX_REPEATED_ITEMS = 10_000


def _arithmetic(node: ast.expr, skipped: list[str]) -> Any:
    """BFCL evaluates arithmetic in a value (`2*3`); here without running anything: numbers and
    text only, and results kept small (a model's `9**9**9` is no denial of service). A result
    beyond those bounds is SKIPPED, its reason added to `skipped`; so is any result computed
    from it."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str):
        return node.value
    if isinstance(node, ast.List | ast.Tuple):
        items = [_arithmetic(item, skipped) for item in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _arithmetic(node.operand, skipped)
        if value is SKIPPED:
            return SKIPPED
        try:
            return -value if isinstance(node.op, ast.USub) else +value
        except TypeError as error:
            raise Undecodable(f"arithmetic failed: {error}") from None
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _arithmetic(node.left, skipped), _arithmetic(node.right, skipped)
        if SKIPPED in (left, right):
            return SKIPPED
        beyond = _beyond_bounds(node.op, left, right)
        if beyond is None:
            try:
                result = _OPERATORS[type(node.op)](left, right)
            except (ArithmeticError, TypeError, ValueError) as error:
                raise Undecodable(f"arithmetic failed: {error}") from None
            beyond = _too_large(result)
            if beyond is None:
                return result
        skipped.append(beyond)
        return SKIPPED
    raise Undecodable(f"cannot compute {ast.unparse(node)[:60]}")


def _beyond_bounds(op: ast.operator, left: Any, right: Any) -> str | None:
    """Why benchyard will not compute `left op right`, or None: a whole-number power whose result
    would pass 10**100 (estimated from the base's bits, before computing it), text or a list
    repeated into more than 10,000 items. Float powers are computed (they overflow into an
    error, as in BFCL's `eval`)."""
    if (
        isinstance(op, ast.Pow)
        and isinstance(left, int)
        and isinstance(right, int)
        and right > 0
        and abs(left) > 1
        and (abs(left).bit_length() - 1) * right > _MAX_POWER_BITS  # the result's least bits
    ):
        return "a number too large to compute"
    if isinstance(op, ast.Mult):
        sequence, count = (left, right) if isinstance(left, str | list | tuple) else (right, left)
        if (
            isinstance(sequence, str | list | tuple)
            and isinstance(count, int)
            and count * max(len(sequence), 1) > _MAX_REPEATED_ITEMS
        ):
            return "text or a list repeated too often"
    return None


def _too_large(result: Any) -> str | None:
    if isinstance(result, int) and not isinstance(result, bool) and abs(result) >= _MAX_MAGNITUDE:
        return "a number too large"
    return None


@dataclass(frozen=True)
class _Observed:
    name: str
    arguments: Any
    undecodable: str | None
    batch: int


def observed_replies(events: list[Event]) -> list[list[_Observed]]:
    """The calls benchyard answered, grouped by the model reply that made them (calls before any
    model reply, as a command agent's or the oracle's, form one group)."""
    batches: dict[int, list[_Observed]] = {}
    batch = 0
    for event in events:
        data = event.data or {}
        if event.kind == "message" and event.role == "assistant" and data.get("source") == "model":
            batch += 1
            continue
        if event.kind != "tool_call" or "tool" not in data or "call_id" not in data:
            continue
        error = data.get("arguments_error")
        arguments = data.get("arguments")
        if error is None and not isinstance(arguments, dict):
            error = "the arguments are not an object"
        batches.setdefault(batch, []).append(
            _Observed(str(data["tool"]), arguments, str(error) if error else None, batch)
        )
    return [batches[key] for key in sorted(batches)]


def calls_of(params: FunctionCallAstParams, evidence: Evidence) -> list[Call]:
    """The reply's calls, or Undecodable."""
    if params.source == "answer":
        return decode_answer(evidence.answer)
    replies = observed_replies(evidence.trajectory)
    chosen = (
        [call for reply in replies for call in reply]
        if params.calls == "all"
        else (replies[0] if replies else [])
    )
    for call in chosen:
        if call.undecodable is not None:
            raise Undecodable(f"{call.name}: {call.undecodable}")
    return [{call.name: dict(call.arguments)} for call in chosen]


# ---- the checker -----------------------------------------------------------------------------


def standardize(text: str) -> str:
    return _STANDARDIZE.sub("", text).lower().replace("'", '"')


def _answer_type(options: list[Any]) -> type | None:
    for option in options:
        if option != "":
            return type(option)
    return None


def _type_check(
    param: str, value: Any, options: list[Any], expected: type, nested: type | None
) -> tuple[bool, bool]:
    """(valid, is_variable), as BFCL's type_checker (nested types one level deep)."""
    answer_type = _answer_type(options)
    is_variable = answer_type is not None and answer_type != expected
    nested_failed = False
    if type(value) is expected:
        if nested is None:
            return True, is_variable
        for option in options:
            fits = True
            if type(option) is list:
                for item in cast(list[Any], value):
                    if not _type_check(param, item, option, nested, None)[0]:
                        fits = False
                        break
            if fits:
                return True, is_variable
        nested_failed = True
    if answer_type is not None and type(value) is answer_type:
        return not nested_failed, True
    return False, is_variable


def _string_ok(value: str, options: list[Any]) -> bool:
    return standardize(value) in [standardize(o) for o in options if type(o) is str]


def _list_ok(value: list[Any], options: list[Any]) -> bool:
    mine = [standardize(item) if type(item) is str else item for item in value]
    theirs = []
    for option in options:
        try:
            theirs.append(
                [
                    standardize(option[j]) if type(option[j]) is str else option[j]
                    for j in range(len(option))
                ]
            )
        except (TypeError, KeyError):
            return False
    return mine in theirs


def _dict_ok(value: dict[Any, Any], options: list[Any]) -> bool:
    for option in options:
        if option == "":
            continue
        if not isinstance(option, dict):
            continue
        fits = True
        for key, item in value.items():
            if key not in option:
                fits = False
                break
            mine = standardize(item) if type(item) is str else item
            theirs = [standardize(o) if type(o) is str else o for o in option[key]]
            if mine not in theirs:
                fits = False
                break
        if fits:
            for key, choices in option.items():
                if key not in value and "" not in choices:
                    fits = False
                    break
        if fits:
            return True
    return False


def _list_of_dicts_ok(value: list[Any], options: list[Any]) -> bool:
    for option in options:
        try:
            if len(value) != len(option):
                continue
            if all(
                isinstance(value[i], dict) and _dict_ok(value[i], [option[i]])
                for i in range(len(value))
            ):
                return True
        except (TypeError, KeyError, IndexError):
            continue
    return False


def check_call(
    function: dict[str, Any] | None,
    output: Call,
    expected: dict[str, dict[str, list[Any]]],
    underscore: bool,
) -> Verdict:
    """BFCL's simple_function_checker: one call against one function and its possible answers."""
    if function is None:
        return Verdict(False, "no function document for the expected call", "checker:no_function")
    possible = next(iter(expected.values()))
    name = str(function.get("name", ""))
    if underscore and "." in name:
        name = name.replace(".", "_")
    if name not in output:
        return Verdict(
            False, f"function {name!r} not called", "simple_function_checker:wrong_func_name"
        )
    given = output[name]
    parameters = function.get("parameters") or {}
    details: dict[str, Any] = parameters.get("properties") or {}
    for required in parameters.get("required") or []:
        if required not in given:
            return Verdict(
                False,
                f"missing required parameter {required!r}",
                "simple_function_checker:missing_required",
            )
    for param, value in given.items():
        if param not in details or param not in possible:
            return Verdict(
                False, f"unexpected parameter {param!r}", "simple_function_checker:unexpected_param"
            )
        description = str(details[param].get("type"))
        expected_type = PYTHON_TYPES.get(description)
        if expected_type is None:
            return Verdict(False, f"unknown type {description!r} of {param!r}", "type_error:simple")
        nested = None
        if description in NESTED_TYPES:
            nested = PYTHON_TYPES.get(str((details[param].get("items") or {}).get("type")))
        if description == "tuple" and type(value) is tuple:
            value = list(value)
        if description == "float" and type(value) is int:
            value = float(value)
        options = possible[param]
        valid, is_variable = _type_check(param, value, options, expected_type, nested)
        if not valid:
            return Verdict(
                False,
                f"{param!r} should be of type {description}, got {type(value).__name__} {value!r}",
                "type_error:nested" if nested else "type_error:simple",
            )
        if not is_variable:
            if expected_type is dict:
                if not _dict_ok(value, options):
                    return Verdict(
                        False,
                        f"{param!r}: {value!r} is none of {options!r}",
                        "value_error:dict_value",
                    )
                continue
            if expected_type is list and nested is dict:
                if not _list_of_dicts_ok(value, options):
                    return Verdict(
                        False,
                        f"{param!r}: {value!r} is none of {options!r}",
                        "value_error:list_dict_count",
                    )
                continue
            if expected_type is str:
                if not _string_ok(value, options):
                    return Verdict(
                        False, f"{param!r}: {value!r} is none of {options!r}", "value_error:string"
                    )
                continue
            if expected_type is list:
                if not _list_ok(value, options):
                    return Verdict(
                        False,
                        f"{param!r}: {value!r} is none of {options!r}",
                        "value_error:list/tuple",
                    )
                continue
        try:
            found = value in options
        except TypeError:
            found = False
        if not found:
            return Verdict(
                False, f"{param!r}: {value!r} is none of {options!r}", "value_error:others"
            )
    for param, choices in possible.items():
        if param not in given and "" not in choices:
            return Verdict(
                False,
                f"{param!r} left out but not optional",
                "simple_function_checker:missing_optional",
            )
    return VALID


def _function(functions: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((f for f in functions if f.get("name") == name), None)


def ast_check(
    category: str,
    functions: list[dict[str, Any]],
    output: list[Call],
    ground_truth: list[dict[str, dict[str, list[Any]]]],
    underscore: bool,
) -> Verdict:
    """BFCL's ast_checker for one reply."""
    if "parallel" in category:
        if len(output) != len(ground_truth):
            return Verdict(
                False,
                f"{len(output)} calls, {len(ground_truth)} expected",
                "parallel_function_checker_no_order:wrong_count",
            )
        matched: list[int] = []
        for index, expected in enumerate(ground_truth):
            function = _function(functions, next(iter(expected)))
            found = False
            last = VALID
            for position, call in enumerate(output):
                if position in matched:
                    continue
                last = check_call(function, call, expected, underscore)
                if last.valid:
                    matched.append(position)
                    found = True
                    break
            if not found:
                return Verdict(
                    False,
                    f"expected call {index + 1} ({next(iter(expected))}) matches no call"
                    + (f": {last.error}" if last.error else ""),
                    "parallel_function_checker_no_order:cannot_find_match",
                )
        return VALID
    if "multiple" in category:
        if len(output) != len(ground_truth):
            return Verdict(
                False,
                f"{len(output)} calls, {len(ground_truth)} expected",
                "multiple_function_checker:wrong_count",
            )
        expected = ground_truth[0]
        return check_call(
            _function(functions, next(iter(expected))), output[0], expected, underscore
        )
    if len(output) != 1:
        return Verdict(
            False,
            f"{len(output)} calls, exactly one expected",
            "simple_function_checker:wrong_count",
        )
    function = functions[0] if functions else None
    return check_call(function, output[0], ground_truth[0], underscore)


def is_empty(calls: list[Call]) -> bool:
    return not calls or (len(calls) == 1 and not calls[0])


def grade(params: FunctionCallAstParams, evidence: Evidence) -> Verdict:
    underscore = (
        params.underscore_names
        if params.underscore_names is not None
        else params.source == "tool_calls"
    )
    try:
        calls = calls_of(params, evidence)
    except NotComputed as error:
        if params.category == "irrelevance":
            return Verdict(
                False,
                f"calls made where none applies (with values benchyard does not compute: {error})",
                "irrelevance_error:decoder_success",
            )
        return Verdict(
            False,
            f"calls with values benchyard does not compute: {error}",
            "ast_decoder:decoder_failed",
        )
    except Undecodable as error:
        if params.category == "irrelevance":
            return VALID
        return Verdict(
            False, f"the reply is not a list of calls: {error}", "ast_decoder:decoder_failed"
        )
    if params.category == "irrelevance":
        if is_empty(calls):
            return VALID
        names = ", ".join(next(iter(call)) for call in calls)
        return Verdict(
            False, f"calls made where none applies: {names}", "irrelevance_error:decoder_success"
        )
    return ast_check(params.category, params.functions, calls, params.ground_truth, underscore)


@check("function_call_ast", FunctionCallAstParams)
def function_call_ast(params: FunctionCallAstParams, evidence: Evidence) -> CheckResult:
    """BFCL's AST checker on the calls benchyard observed (types, optional parameters, any-of
    values, order-free parallel calls, no call for irrelevance)."""
    verdict = grade(params, evidence)
    if verdict.valid:
        what = "no call, as expected" if params.category == "irrelevance" else "the calls match"
        return CheckResult.of(True, f"{params.category}: {what}")
    return CheckResult.of(False, f"{params.category}: {verdict.error} ({verdict.error_type})")


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
