"""The `code_exec` driver: import the model's solution, run the test asserts, then print the marker.

Usage: python3 -I -c <this file> MARKER_FILE MODULE TESTS_FILE

The marker is read from MARKER_FILE, which is deleted before the solution is imported, and is
written to stdout only after every assert passed; an early `sys.exit(0)` or `os._exit(0)` in the
solution therefore never passes. A failure is described on the last line of stderr.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from types import TracebackType

PREFIX = "benchyard-code-exec: "


def _where(trace: TracebackType | None, tests: str) -> str:
    """The line of the tests that failed, as `tests line N: <source>`."""
    frames = [frame for frame in traceback.extract_tb(trace) if frame.filename == "<tests>"]
    if not frames or frames[-1].lineno is None:
        return ""
    number = frames[-1].lineno
    lines = tests.splitlines()
    source = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    return f"tests line {number}: {source}: "


def _fail(stage: str, error: BaseException, where: str = "") -> int:
    detail = f"{type(error).__name__}: {error}".rstrip(": ")
    sys.stderr.write(f"\n{PREFIX}{stage}: {where}{detail}\n")
    return 1


def main(argv: list[str]) -> int:
    marker_file, module_name, tests_file = argv
    write, run, build = os.write, exec, compile  # kept before the solution can replace them
    with open(marker_file, encoding="utf-8") as handle:
        marker = handle.read().strip()
    os.unlink(marker_file)
    with open(tests_file, encoding="utf-8") as handle:
        tests = handle.read()
    try:
        code = build(tests, "<tests>", "exec")
    except SyntaxError as error:
        return _fail("the tests do not compile", error)
    sys.path.insert(0, os.getcwd())
    try:
        solution = importlib.import_module(module_name)
    except BaseException as error:  # SystemExit too: exiting while imported is a failure
        return _fail("the solution could not be imported", error)
    namespace = {name: value for name, value in vars(solution).items() if not name.startswith("__")}
    namespace.update({"__name__": "__benchyard_tests__", module_name: solution})
    try:
        run(code, namespace)
    except BaseException as error:
        return _fail("a test failed", error, _where(error.__traceback__, tests))
    sys.stdout.flush()
    write(1, f"\n{marker}\n".encode())
    return 0


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # neither the solution's threads nor its atexit hooks may change the outcome
