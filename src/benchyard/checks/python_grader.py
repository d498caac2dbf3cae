"""`python`: a grader function from a file of the benchmark, run in the verification sandbox.

The grader file is copied into the check's io dir (outside the workdir, out of the patch's reach)
and run by scripts/python_grader.py with the sandbox's `python3 -I`, so neither benchyard nor the
rest of the benchmark directory is within its reach. It is called as `grade(answer, context)` with
the context as JSON (answer, answers, scenario_id, reference, config, tool_calls) and returns
`{"pass", "score", "reason"}` (or a bool, or a score).

What a broken grader means (docs/benchmark-format.md, `python`):

- a grader file that is missing, leaves the benchmark, does not parse or defines no such function
  is a load-time problem (`validate`, and `run` refuses to start);
- a grader that cannot be loaded in the sandbox (an import it lacks), before it is given the
  answer, is an uncounted check error (CheckFailedToRun): the answer played no part in it;
- a grader that raises, returns something that is not a result, hangs or dies once it has the
  answer fails the check, counted: the answer is the grader's input, so an agent could otherwise
  turn its failures into uncounted errors by crafting answers that crash the grader. The reason
  starts with `grader error:` so that the author sees it is the grader's, and `verify` catches it
  on the reference.
"""

from __future__ import annotations

import ast
import json
import math
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import Field, field_validator

from benchyard.checks.answer_json import MAX_DEPTH, is_number, nesting_depth
from benchyard.checks.answer_reference import graded_reference
from benchyard.checks.answer_text import clip, trimmed
from benchyard.checks.base import (
    CheckFailedToRun,
    CheckParams,
    CheckResult,
    CodeWorkspace,
    Evidence,
)
from benchyard.checks.code_support import (
    CANNOT_RUN,
    EXIT_NOT_RUNNABLE,
    READY,
    exit_text,
    one_line,
    run_model_code,
    script,
    tail,
    workspace,
)
from benchyard.checks.registry import check
from benchyard.runner.tool_events import observed_calls
from benchyard.untrusted import UntrustedFileRefused, read_capped, write_fresh

MAX_GRADER_BYTES = 1024 * 1024
INPUT_FILE = "grader_input.json"
REASON_CHARS = 500
RESULT_KEYS = frozenset({"pass", "score", "reason"})
FUNCTION_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class PythonParams(CheckParams):
    file: str = Field(
        min_length=1,
        description="The grader, a .py file of the benchmark, relative to the scenario file.",
    )
    function: str = Field(
        default="grade",
        pattern=FUNCTION_NAME,
        description="The function called as function(answer, context).",
    )
    config: dict[str, Any] = Field(
        default_factory=dict, description="Any values, given to the grader as context['config']."
    )
    threshold: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="A grader that returns only a score passes when it reaches this (default 1).",
    )
    timeout_sec: float = Field(default=30.0, gt=0, description="Loading and grading together.")

    @field_validator("config")
    @classmethod
    def _json_values(cls, config: dict[str, Any]) -> dict[str, Any]:
        try:
            json.dumps(config, allow_nan=False)
        except (TypeError, ValueError) as error:
            raise ValueError(f"config must hold JSON values only (quote dates): {error}") from None
        return config

    @field_validator("file")
    @classmethod
    def _python_file(cls, file: str) -> str:
        if file.startswith("/") or "\\" in file:
            raise ValueError(f"'{file}' must be a path relative to the scenario file, with '/'")
        if not file.endswith(".py"):
            raise ValueError(f"'{file}' is not a .py file")
        return file

    def benchmark_files(self) -> dict[str, str]:
        return {"file": self.file}

    def benchmark_file_problem(self, name: str, path: Path) -> str | None:
        """The grader must be a readable Python file, of modest size, that parses and binds the
        function's name at its top level."""
        if not path.is_file():
            return f"'{self.file}' is not a file"
        try:
            data = read_capped(path, MAX_GRADER_BYTES + 1)
        except OSError as error:
            return f"'{self.file}' cannot be read ({error.strerror or error})"
        if len(data) > MAX_GRADER_BYTES:
            return f"'{self.file}' is over {MAX_GRADER_BYTES // 1024} KiB"
        try:
            tree = ast.parse(data, filename=self.file)
        except (SyntaxError, ValueError) as error:
            line = getattr(error, "lineno", None)
            where = f" line {line}" if line else ""
            return f"'{self.file}'{where} does not parse: {getattr(error, 'msg', error)}"
        names = _top_level_names(tree)
        if self.function not in names:
            shown = ", ".join(sorted(n for n in names if not n.startswith("_"))) or "none"
            return f"'{self.file}' defines no '{self.function}' (top-level names: {shown})"
        return None


def _top_level_names(tree: ast.Module) -> set[str]:
    """Names a module binds at its top level: functions, classes, assignments, imports."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {
                t.id for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)
            }
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


@dataclass(frozen=True)
class Grader:
    """Where the grader and its input are, in the check's io dir."""

    file: Path
    input: Path


def _install(code: CodeWorkspace, params: PythonParams, evidence: Evidence) -> Grader:
    """Copy the grader file into the io dir and write the context beside it."""
    source = (code.scenario_dir / params.file).resolve()  # inside the benchmark: checked at load
    try:
        data = read_capped(source, MAX_GRADER_BYTES + 1)
    except (OSError, UntrustedFileRefused) as error:
        raise CheckFailedToRun(f"the grader {params.file} cannot be read: {error}") from None
    if len(data) > MAX_GRADER_BYTES:
        raise CheckFailedToRun(f"the grader {params.file} is over {MAX_GRADER_BYTES // 1024} KiB")
    grader = Grader(code.io_dir / PurePosixPath(params.file).name, code.io_dir / INPUT_FILE)
    write_fresh(grader.file, data)
    write_fresh(grader.input, json.dumps(_context(params, evidence)).encode("utf-8"))
    return grader


def _context(params: PythonParams, evidence: Evidence) -> dict[str, Any]:
    calls = [
        {"name": call.name, "arguments": call.arguments, "error": call.error, "turn": call.turn}
        for call in observed_calls(evidence.trajectory)
        if nesting_depth(call.arguments) <= MAX_DEPTH  # what json.dumps, here and there, can take
    ]
    return {
        "answer": trimmed(evidence.answer),
        "answers": [trimmed(answer) for answer in evidence.answers or [evidence.answer]],
        "raw_answer": evidence.answer,
        "scenario_id": evidence.scenario.id,
        "reference": graded_reference(evidence),
        "config": params.config,
        "tool_calls": calls,
    }


@check("python", PythonParams, needs_code=True)
async def python(params: PythonParams, evidence: Evidence) -> CheckResult:
    """A grader function from a .py file of the benchmark, run in the verification sandbox."""
    code = workspace(evidence, "python")
    grader = _install(code, params, evidence)
    argv = [
        "python3",
        "-I",
        "-c",
        script("python_grader"),
        str(grader.file),
        params.file,
        params.function,
        str(grader.input),
    ]
    outcome = await run_model_code(code, argv, timeout_sec=params.timeout_sec)
    named = f"{params.file}:{params.function}"
    stdout = outcome.stdout
    if stdout.startswith(CANNOT_RUN):
        raise CheckFailedToRun(tail(stdout[len(CANNOT_RUN) :].split(b"\n", 1)[0]))
    if not stdout.startswith(READY):
        raise CheckFailedToRun(_not_loaded(named, outcome.returncode, outcome.stderr, params))
    line, ended, _ = stdout[len(READY) :].partition(b"\n")
    if ended:
        return _result(params, named, line)
    if outcome.timed_out:
        return _grader_error(f"{named} did not return within {params.timeout_sec:g}s")
    if line:
        return _grader_error(f"{named} gave a result cut short (over the output cap?)")
    return _grader_error(
        f"{named} ended without a result ({exit_text(outcome.returncode)}): {tail(outcome.stderr)}"
    )


def _not_loaded(named: str, returncode: int | None, stderr: bytes, params: PythonParams) -> str:
    if returncode is None:
        return f"the grader {named} did not load within {params.timeout_sec:g}s"
    if returncode in EXIT_NOT_RUNNABLE:
        return f"python3 could not run in the sandbox ({exit_text(returncode)}): {tail(stderr)}"
    return f"python3 ended before the grader {named} was loaded ({exit_text(returncode)}): {tail(stderr)}"


def _grader_error(text: str) -> CheckResult:
    """A grader that failed once it had the answer: a counted failure (see the module)."""
    return CheckResult.of(False, f"grader error: {text}")


def _result(params: PythonParams, named: str, line: bytes) -> CheckResult:
    """The check's result from the runner's line, or a grader error saying what was wrong."""
    try:
        report = json.loads(line)
    except (ValueError, RecursionError):
        return _grader_error(f"{named} gave an unreadable result: {tail(line, 120)}")
    if not isinstance(report, dict) or nesting_depth(report) > MAX_DEPTH:
        return _grader_error(f"{named} gave an unreadable result: {tail(line, 120)}")
    if "raised" in report:
        where = f" at {_clean(report['where'])}" if isinstance(report.get("where"), str) else ""
        return _grader_error(f"{named} raised {_clean(str(report['raised']))}{where}")
    if "unserialisable" in report:
        return _grader_error(
            f"{named} returned a value that is not JSON ({_clean(str(report['unserialisable']))})"
        )
    return _interpret(params, named, report.get("returned"))


def _interpret(params: PythonParams, named: str, value: Any) -> CheckResult:
    """{pass, score, reason} (pass or score required), true/false, or a score from 0 to 1."""
    wanted = "expected {pass, score, reason}, true/false or a score from 0 to 1"
    if isinstance(value, bool):
        value = {"pass": value}
    elif is_number(value):
        value = {"score": value}
    if not isinstance(value, dict):
        return _grader_error(f"{named} returned {_shown(value)}; {wanted}")
    unknown = sorted(set(value) - RESULT_KEYS)
    problems = [f"unknown key(s) {', '.join(map(repr, unknown))}"] if unknown else []
    passed, score, reason = value.get("pass"), value.get("score"), value.get("reason", "")
    if passed is None and score is None:
        problems.append("neither 'pass' nor 'score'")
    if passed is not None and not isinstance(passed, bool):
        problems.append(f"'pass' is {_shown(passed)}, not true or false")
    if score is not None and not (is_number(score) and math.isfinite(score) and 0 <= score <= 1):
        problems.append(f"'score' is {_shown(score)}, not a number from 0 to 1")
    if not isinstance(reason, str):
        problems.append(f"'reason' is {_shown(reason)}, not text")
    if problems:
        return _grader_error(f"{named} returned {_shown(value)}: {'; '.join(problems)}; {wanted}")
    return _graded(params, named, passed, None if score is None else float(score), reason)


def _graded(
    params: PythonParams, named: str, passed: bool | None, score: float | None, reason: str
) -> CheckResult:
    if passed is None:
        assert score is not None
        threshold = 1.0 if params.threshold is None else params.threshold
        passed = score >= threshold
        verdict = f"score {score:g} {'reaches' if passed else 'is below'} threshold {threshold:g}"
    else:
        verdict = "passed" if passed else "failed"
        if score is not None:
            verdict += f" (score {score:g})"
    said = f": {clip(_clean(reason), REASON_CHARS)}" if reason.strip() else ""
    final = score if score is not None else (1.0 if passed else 0.0)
    return CheckResult(passed, final, f"grader {named} {verdict}{said}")


def _clean(text: str) -> str:
    """The grader's text fit for a reason: one line, no NUL, no lone surrogate (which JSON can
    carry and a text column cannot)."""
    return one_line(text).encode("utf-8", "replace").decode("utf-8")


def _shown(value: Any) -> str:
    try:
        return clip(_clean(json.dumps(value, ensure_ascii=False)), 80)
    except (TypeError, ValueError, RecursionError):
        return type(value).__name__
