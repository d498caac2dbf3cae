"""`tests`: run a test command in the verification sandbox and grade its results.

The reason keeps the three stages apart: was the agent's patch applied, did the tests run (and
what they reported), and how that was graded against the FAIL_TO_PASS / PASS_TO_PASS lists.

Repository tests run the patched code in their own process, so that code can tamper with the
results (a patched `unittest.TestCase.run`, a JUnit file written before an early exit); what the
patch does to the test machinery is scanned (patch_scan.py) and noted in the reason, which the
report turns into a `suspicious_patch` flag. The bundled runners' results are read from their
report on stdout (testrun.read_report), a descriptor they keep from before the repository's code
is imported; the JUnit file they also write is never read, and a report without its end record
is a failure. Whatever the tests' process does, an exit status included, is the agent's outcome:
only the bundled runners' own word (code_support.run_script) makes a run an infrastructure error.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from benchyard.checks.base import (
    CheckParams,
    CheckResult,
    CodeWorkspace,
    Evidence,
)
from benchyard.checks.code_support import exit_text, run_model_code, run_script, tail, workspace
from benchyard.checks.patch_scan import scan_patch, suspicious_note
from benchyard.checks.registry import check
from benchyard.checks.testrun import (
    PASSED,
    SuiteResult,
    matching,
    read_junit,
    read_report,
    read_summary,
)
from benchyard.sandbox.process import ProcessOutcome
from benchyard.untrusted import UntrustedFileRefused

JUNIT_FILE = "junit.xml"


class TestsParams(CheckParams):
    command: str | None = Field(
        default=None,
        description="A shell command run in the verification workdir; default: the framework's runner. "
        "Write JUnit XML to $BENCHYARD_JUNIT_XML for per-test results.",
    )
    framework: Literal["unittest", "pytest"] = "unittest"
    start_dir: str = Field(default=".", description="Where unittest discovery starts.")
    pattern: str = Field(default="test*.py", description="The files unittest discovery loads.")
    fail_to_pass: list[str] = Field(
        default_factory=list, description="Tests the change must make pass."
    )
    pass_to_pass: list[str] = Field(
        default_factory=list, description="Tests that passed before and must still pass."
    )
    min_tests: int = Field(default=1, ge=0, description="At least this many tests must run.")
    timeout_sec: float = Field(default=120.0, gt=0)


@check("tests", TestsParams, needs_code=True)
async def tests_check(params: TestsParams, evidence: Evidence) -> CheckResult:
    """The tests pass on the agent's patch, in a fresh verification sandbox."""
    code = workspace(evidence, "tests")
    if code.patch_error is not None:
        return CheckResult.of(False, f"patch not applied: {code.patch_error}; tests not run")
    files = len(code.changes)
    applied = (
        f"patch applied ({files} file{'' if files == 1 else 's'})"
        if code.patch
        else ("no patch (the agent changed nothing)")
    )
    outcome = await _run_tests(params, code)
    note = suspicious_note(scan_patch(code.patch))
    if outcome.timed_out:
        return CheckResult.of(
            False, f"{applied}; tests did not finish: timed out after {params.timeout_sec:g}s{note}"
        )
    ended = exit_text(outcome.returncode)
    output_tail = tail(
        outcome.stderr if params.command is None else outcome.stderr or outcome.stdout
    )
    ended_with = f"{ended}): {output_tail}" if output_tail else f"{ended})"
    if params.command is None:
        reported, problem = read_report(outcome.stdout)
        if reported is None and outcome.stdout_dropped:
            problem = (
                f"the runner's report was cut at the output cap ({outcome.stdout_dropped} bytes "
                "dropped): more tests than it holds"
            )
        if reported is None:
            return CheckResult.of(
                False, f"{applied}; tests did not run to the end: {problem} ({ended_with}{note}"
            )
        return _graded(params, applied, reported, outcome.returncode, note)
    try:
        results = read_junit(code.io_dir / JUNIT_FILE)
    except UntrustedFileRefused as error:
        return CheckResult.of(
            False,
            f"{applied}; test results refused: {JUNIT_FILE} is {error.strerror} ({ended}){note}",
        )
    output = (outcome.stdout + b"\n" + outcome.stderr).decode("utf-8", errors="replace")
    results = results or read_summary(output)
    if results is None:
        return CheckResult.of(
            False,
            f"{applied}; tests did not run: no JUnit XML and no result line in the output "
            f"({ended_with}{note}",
        )
    return _graded(params, applied, results, outcome.returncode, note)


def _graded(
    params: TestsParams, applied: str, results: SuiteResult, returncode: int | None, note: str
) -> CheckResult:
    ran = f"tests ran: {results.describe()} ({results.source}, exit {returncode})"
    passed, score, graded = _grade(params, results, returncode)
    return CheckResult(passed, score, f"{applied}; {ran}; graded: {graded}{note}")


async def _run_tests(params: TestsParams, code: CodeWorkspace) -> ProcessOutcome:
    junit = str(code.io_dir / JUNIT_FILE)
    env = {"BENCHYARD_JUNIT_XML": junit}
    if params.command is not None:
        argv = ["/bin/sh", "-c", params.command]
        return await run_model_code(code, argv, timeout_sec=params.timeout_sec, env=env)
    if params.framework == "pytest":
        name, arguments = "pytest_junit", [junit]
    else:
        name, arguments = "unittest_junit", [junit, params.start_dir, params.pattern]
    return await run_script(code, name, arguments, timeout_sec=params.timeout_sec, env=env)


def _grade(
    params: TestsParams, results: SuiteResult, returncode: int | None
) -> tuple[bool, float, str]:
    if not params.fail_to_pass and not params.pass_to_pass:
        return _grade_all(params, results, returncode)
    if not results.cases:  # not an infrastructure fault: the tests' process may have removed it
        return (
            False,
            0.0,
            "failed: fail_to_pass and pass_to_pass need per-test results: the test command should "
            "write JUnit XML to $BENCHYARD_JUNIT_XML",
        )
    parts, passing, listed = [], 0, 0
    for label, wanted in (
        ("FAIL_TO_PASS", params.fail_to_pass),
        ("PASS_TO_PASS", params.pass_to_pass),
    ):
        if not wanted:
            continue
        problems = [problem for test_id in wanted if (problem := _problem(results, test_id))]
        passing += len(wanted) - len(problems)
        listed += len(wanted)
        detail = f" (not passing: {', '.join(problems)})" if problems else ""
        parts.append(f"{label} {len(wanted) - len(problems)}/{len(wanted)} pass{detail}")
    verdict = "passed" if passing == listed else "failed"
    return passing == listed, passing / listed, f"{verdict}: {', '.join(parts)}"


def _problem(results: SuiteResult, test_id: str) -> str | None:
    """Why a listed test does not count as passing, or None when it passed."""
    cases = matching(results.cases, test_id)
    if not cases:
        return f"{test_id} did not run"
    failing = [case for case in cases if case.status != PASSED]
    return f"{test_id} {failing[0].status}" if failing else None


def _grade_all(
    params: TestsParams, results: SuiteResult, returncode: int | None
) -> tuple[bool, float, str]:
    score = results.passed / results.total if results.total else 0.0
    if results.total < params.min_tests:
        return (
            False,
            score,
            f"failed: {results.total} tests ran, at least {params.min_tests} expected",
        )
    if results.failed or results.errors:
        return (
            False,
            score,
            f"failed: {results.failed + results.errors} of {results.total} did not pass",
        )
    if returncode != 0:
        return False, score, f"failed: every test passed but the command exited {returncode}"
    return True, 1.0, f"passed: all {results.passed} passed"
