"""The `python` check's runner: loads a benchmark's grader file and calls its function on the answer.

Usage: python3 -I -c <this file> GRADER_FILE SHOWN_NAME FUNCTION INPUT_FILE

Only this runner writes to stdout, through a copy of the descriptor it was given; from the start,
descriptor 1 (and sys.stdout) of the process is its stderr, so whatever the grader prints, and
whatever its subprocesses print, lands in stderr, where it cannot pass for the runner's lines:

- `benchyard: cannot run: <why>` when the grader cannot be loaded or has no such function (before
  the answer is read: it cannot be the answer's doing); else
- `benchyard: ready`, then, once the function has returned or raised, one line of JSON:
  `{"returned": <value>}`, `{"unserialisable": "<type>: <why>"}` or
  `{"raised": "<Type>: <message>", "where": "<SHOWN_NAME> line N"}`.

INPUT_FILE holds the JSON context (answer, answers, raw_answer, scenario_id, reference, config,
tool_calls); the function is called as `function(context["answer"], context)`. Standard library only.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import traceback
from collections.abc import Callable

READY = b"benchyard: ready\n"
CANNOT_RUN = b"benchyard: cannot run: "
MESSAGE_CHARS = 500


def _write(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _describe(error: BaseException) -> str:
    message = error.msg if isinstance(error, SyntaxError) else str(error)  # the line comes apart
    text = f"{type(error).__name__}: {message}" if message else type(error).__name__
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 3] + "..."


def _where(error: BaseException, path: str, shown: str) -> str | None:
    """The last line of the grader's file that the error went through."""
    if isinstance(error, SyntaxError) and error.filename == path:
        return f"{shown} line {error.lineno}"
    frames = traceback.extract_tb(error.__traceback__)
    lines = [frame.lineno for frame in frames if frame.filename == path]
    return f"{shown} line {lines[-1]}" if lines else None


def _load(path: str, shown: str, name: str) -> Callable[..., object]:
    spec = importlib.util.spec_from_file_location("benchyard_grader", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{shown} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules["benchyard_grader"] = module
    spec.loader.exec_module(module)
    function = getattr(module, name, None)
    if function is None:
        raise LookupError(f"{shown} defines no '{name}'")
    if not callable(function):
        raise TypeError(f"'{name}' in {shown} is a {type(function).__name__}, not a function")
    return function  # type: ignore[no-any-return]


def main() -> None:
    path, shown, name, input_file = sys.argv[1:5]
    sys.stdout.flush()
    out = os.dup(1)  # not inherited by the grader's subprocesses
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.dont_write_bytecode = True  # -I ignores PYTHONDONTWRITEBYTECODE
    try:
        function = _load(path, shown, name)
    except BaseException as error:  # SyntaxError, ImportError, SystemExit at import time...
        where = _where(error, path, shown)
        why = f"the grader {shown} could not be loaded: {_describe(error)}"
        why += f" ({where})" if where else ""
        _write(out, CANNOT_RUN + " ".join(why.split()).encode("utf-8", "replace") + b"\n")
        return
    _write(out, READY)
    with open(input_file, encoding="utf-8") as file:
        context = json.load(file)
    _write(out, _call(function, context, path, shown).encode("utf-8") + b"\n")
    sys.stderr.flush()
    os._exit(0)  # the result is out: threads or atexit hooks the grader left do not hold it up


def _call(
    function: Callable[..., object], context: dict[str, object], path: str, shown: str
) -> str:
    """The line of JSON that says what the grader did."""
    try:
        value = function(context["answer"], context)
    except BaseException as error:  # the grader's own failure, SystemExit included
        return json.dumps({"raised": _describe(error), "where": _where(error, path, shown)})
    try:
        return json.dumps({"returned": value}, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as error:
        return json.dumps({"unserialisable": f"{type(value).__name__}: {_describe(error)}"})


if __name__ == "__main__":
    main()
