"""`code_exec`: the code in the answer passes test asserts, run in the verification sandbox.

By default the tests run in a process apart from the solution's, and call it across a pipe whose
values are plain data (scripts/code_exec_driver.py): nothing the solution does in its own process
can change what the asserts compute. Passing needs a random marker, new for every attempt, that
the driver prints only after the last assert: exiting 0 alone is not enough.
"""

from __future__ import annotations

import secrets

from pydantic import Field, model_validator

from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.code_support import (
    answer_code,
    exit_text,
    one_line,
    run_script,
    tail,
    workspace,
)
from benchyard.checks.registry import check

FAILURE_PREFIX = "benchyard-code-exec: "
APART = "(tests in a separate process)"
SAME = "(tests in the solution's process: its code could have forged this)"
DRIVER_MODULES = ("code_exec_wire", "code_exec_solution")  # what code_exec_driver loads


class CodeExecParams(CheckParams):
    tests: str | None = Field(
        default=None,
        description="Python test code (asserts), run with the solution's names as globals (never "
        "one named like a builtin, which stays Python's).",
    )
    tests_file: str | None = Field(
        default=None,
        description="Or a file of the verification workdir holding them (a verification fixture).",
    )
    module: str = Field(
        default="solution",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="The module the code is written as (`solution.py`), for tests that import it.",
    )
    timeout_sec: float = Field(default=10.0, gt=0)
    same_process: bool = Field(
        default=False,
        description="Run the tests inside the solution's own process, as imported code, for tests "
        "that need its real objects (subclassing its classes, isinstance, object identity). "
        "Forgeable: the solution's code can then make the tests pass without being right.",
    )

    @model_validator(mode="after")
    def _one_source_of_tests(self) -> CodeExecParams:
        if (self.tests is None) == (self.tests_file is None):
            raise ValueError("give exactly one of 'tests' or 'tests_file'")
        if self.tests is not None:
            try:
                compile(self.tests, "<tests>", "exec", dont_inherit=True)
            except SyntaxError as error:
                raise ValueError(f"tests line {error.lineno}: {error.msg}") from None
        return self


@check("code_exec", CodeExecParams, needs_code=True, reads_change=False)
async def code_exec(params: CodeExecParams, evidence: Evidence) -> CheckResult:
    """The code in the answer passes the test asserts, run in a fresh sandbox."""
    code = workspace(evidence, "code_exec")
    code.write_file(f"{params.module}.py", answer_code(evidence.answer))
    marker = f"benchyard-marker-{secrets.token_hex(16)}"
    marker_file = code.io_dir / "marker"
    marker_file.write_text(marker, encoding="utf-8")
    tests_file = params.tests_file
    if params.tests is not None:
        (code.io_dir / "tests.py").write_text(params.tests, encoding="utf-8")
        tests_file = str(code.io_dir / "tests.py")
    assert tests_file is not None
    mode = "same" if params.same_process else "process"
    outcome = await run_script(
        code,
        "code_exec_driver",
        [str(marker_file), params.module, tests_file, mode],
        timeout_sec=params.timeout_sec,
        modules=DRIVER_MODULES,
    )
    how = SAME if params.same_process else APART
    if outcome.timed_out:
        return CheckResult.of(False, f"timed out after {params.timeout_sec:g}s {how}")
    stdout = outcome.stdout.decode("utf-8", errors="replace")
    if outcome.returncode == 0 and marker in stdout:
        return CheckResult.of(
            True, f"the tests passed (marker printed after the last assert) {how}"
        )
    if outcome.returncode == 0:
        return CheckResult.of(
            False,
            "exited 0 without printing the marker: the tests did not run to the end "
            f"(did the code exit early?) {how}",
        )
    return CheckResult.of(False, f"{_failure(stdout, outcome.stderr, outcome.returncode)} {how}")


def _failure(stdout: str, stderr: bytes, returncode: int | None) -> str:
    """The driver's own description of the failure (its last line on stdout), else the end of
    stderr."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(FAILURE_PREFIX):
            return one_line(line.removeprefix(FAILURE_PREFIX))
    return f"the code failed ({exit_text(returncode)}): {tail(stderr)}"
