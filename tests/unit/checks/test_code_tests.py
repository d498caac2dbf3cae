"""`tests`: a test command in a real sandbox, its results read and graded in separate stages."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchyard.checks.base import CheckFailedToRun
from benchyard.checks.testrun import CaseResult, matching, normalize, read_junit, read_summary

from .code_helpers import code_sandbox, evaluate, workspace
from .helpers import params_error

CODE = {"calc.py": "def add(a, b):\n    return a - b\n"}
FIXED = {"calc.py": "def add(a, b):\n    return a + b\n"}
VISIBLE = {
    "tests/__init__.py": "",
    "tests/test_calc.py": (
        "import unittest\n\nfrom calc import add\n\n\n"
        "class TestCalc(unittest.TestCase):\n"
        "    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n"
    ),
}
HIDDEN = {
    "tests/test_hidden.py": (
        "import unittest\n\nfrom calc import add\n\n\n"
        "class TestHidden(unittest.TestCase):\n"
        "    def test_two(self):\n        self.assertEqual(add(1, 1), 2)\n"
    )
}
LISTS = {
    "fail_to_pass": ["tests/test_hidden.py::TestHidden::test_two"],
    "pass_to_pass": ["TestCalc.test_zero"],
}


async def test_fail_to_pass_and_pass_to_pass_pass_on_the_fix(tmp_path: Path) -> None:
    async with workspace(tmp_path, {**CODE, **VISIBLE}, FIXED, HIDDEN) as code:
        result = await evaluate("tests", code, **LISTS)
    assert result.passed and result.score == 1.0
    assert result.reason == (
        "patch applied (1 file); tests ran: 2 passed, 0 failed, 0 errors (runner's report, exit 0); "
        "graded: passed: FAIL_TO_PASS 1/1 pass, PASS_TO_PASS 1/1 pass"
    )


async def test_without_the_fix_fail_to_pass_fails(tmp_path: Path) -> None:
    async with workspace(tmp_path, {**CODE, **VISIBLE}, None, HIDDEN) as code:
        result = await evaluate("tests", code, **LISTS)
    assert not result.passed and result.score == 0.5
    assert result.reason.startswith("no patch (the agent changed nothing); tests ran: 1 passed, ")
    assert result.reason.endswith(
        "graded: failed: FAIL_TO_PASS 0/1 pass (not passing: "
        "tests/test_hidden.py::TestHidden::test_two failed), PASS_TO_PASS 1/1 pass"
    )


async def test_hidden_tests_replace_what_the_agent_wrote_in_their_place(tmp_path: Path) -> None:
    cheat = {"tests/test_hidden.py": "raise SystemExit(0)\n", "tests/test_calc.py": ""}
    async with workspace(tmp_path, {**CODE, **VISIBLE}, cheat, HIDDEN) as code:
        result = await evaluate("tests", code, **LISTS)
    assert not result.passed
    assert (
        "FAIL_TO_PASS 0/1 pass (not passing: tests/test_hidden.py::TestHidden::test_two failed)"
        in (result.reason)
    )
    assert "PASS_TO_PASS 0/1 pass (not passing: TestCalc.test_zero did not run)" in result.reason


async def test_without_lists_every_test_must_pass(tmp_path: Path) -> None:
    async with workspace(tmp_path, {**CODE, **VISIBLE}, FIXED, HIDDEN) as code:
        fixed = await evaluate("tests", code)
        too_few = await evaluate("tests", code, min_tests=3)
    assert fixed.passed and fixed.reason.endswith("graded: passed: all 2 passed")
    assert not too_few.passed and too_few.reason.endswith(
        "failed: 2 tests ran, at least 3 expected"
    )
    async with workspace(tmp_path / "broken", {**CODE, **VISIBLE}, None, HIDDEN) as code:
        broken = await evaluate("tests", code)
    assert not broken.passed and broken.score == 0.5
    assert broken.reason.endswith("graded: failed: 1 of 2 did not pass")


async def test_a_custom_command_and_its_summary_line(tmp_path: Path) -> None:
    script = {"run.sh": "echo '=== 3 passed, 1 failed in 0.10s ==='\nexit 1\n"}
    async with workspace(tmp_path, script) as code:
        result = await evaluate("tests", code, command="sh run.sh")
        listed = await evaluate("tests", code, command="sh run.sh", **LISTS)
    assert not result.passed and result.score == 0.75
    assert "tests ran: 3 passed, 1 failed, 0 errors (summary line, exit 1)" in result.reason
    # the tests' own process may have removed its JUnit file: a failure, never an error
    assert not listed.passed and listed.score == 0.0
    assert listed.reason.endswith(
        "graded: failed: fail_to_pass and pass_to_pass need per-test results: the test command "
        "should write JUnit XML to $BENCHYARD_JUNIT_XML"
    )


async def test_a_command_not_found_fails_with_a_hint_since_the_code_can_exit_127_too(
    tmp_path: Path,
) -> None:
    async with workspace(tmp_path, CODE) as code:
        result = await evaluate("tests", code, command="no-such-test-runner --all")
    assert not result.passed
    assert result.reason.startswith(
        "no patch (the agent changed nothing); tests did not run: no JUnit XML and no result line "
        "in the output (exit 127 (command not found?)): "
    )


async def test_the_built_in_runner_must_report_its_end(tmp_path: Path) -> None:
    quits = {"tests/test_quit.py": "import os\nprint('=== 9 passed in 0.1s ===')\nos._exit(0)\n"}
    async with workspace(tmp_path, {**CODE, **VISIBLE}, quits) as code:
        result = await evaluate("tests", code)
    assert not result.passed
    assert result.reason == (
        "patch applied (1 file); tests did not run to the end: the runner did not report its end "
        "(the tests' process ended before it) (exit 0)"
    )


FAKE_PYTEST = {"pytest.py": "print('=== 5 passed in 0.1s ===')\nraise SystemExit(0)\n"}


@pytest.mark.parametrize("sandbox_name", ["bwrap", "docker"])
async def test_pytest_runs_the_real_pytest_or_says_it_is_missing(
    tmp_path: Path, sandbox_name: str
) -> None:
    """A `pytest.py` the agent adds never stands in for pytest; a sandbox whose python3 has no
    pytest makes the check unable to run (an error, not counted), whatever the repository holds."""
    sandbox = code_sandbox(sandbox_name)
    async with workspace(tmp_path, {**FIXED, **VISIBLE}, FAKE_PYTEST, sandbox=sandbox) as code:
        probe = await code.run(["python3", "-I", "-c", "import pytest"], timeout_sec=60)
        if probe.returncode != 0:
            with pytest.raises(CheckFailedToRun, match="pytest_junit cannot run in the sandbox"):
                await evaluate("tests", code, framework="pytest")
            return
        result = await evaluate("tests", code, framework="pytest")
    assert result.passed, result.reason
    assert "tests ran: 1 passed, 0 failed, 0 errors (runner's report, exit 0)" in result.reason


async def test_no_results_means_the_tests_did_not_run(tmp_path: Path) -> None:
    async with workspace(tmp_path, CODE) as code:
        result = await evaluate("tests", code, command="echo collecting; exit 3")
    assert not result.passed
    assert result.reason.startswith(
        "no patch (the agent changed nothing); tests did not run: no JUnit XML and no result "
        "line in the output (exit 3)"
    )


async def test_a_hang_is_cut_at_the_timeout(tmp_path: Path) -> None:
    async with workspace(tmp_path, CODE) as code:
        result = await evaluate("tests", code, command="sleep 30", timeout_sec=0.5)
    assert not result.passed
    assert result.reason.endswith("tests did not finish: timed out after 0.5s")


async def test_a_patch_that_was_refused_is_not_tested(tmp_path: Path) -> None:
    async with workspace(tmp_path, CODE) as code:
        code.patch_error = "the patch is 5000000 bytes, over 4194304"
        result = await evaluate("tests", code)
    assert not result.passed
    assert (
        result.reason
        == "patch not applied: the patch is 5000000 bytes, over 4194304; tests not run"
    )


def test_params_are_validated_at_load() -> None:
    assert "Input should be 'unittest' or 'pytest'" in params_error("tests", framework="nose")
    assert "Extra inputs are not permitted" in params_error("tests", fail_to_pas=["x"])


# reading results


def test_junit_xml_statuses(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(
        '<testsuites><testsuite name="s">'
        '<testcase classname="tests.test_a.TestA" name="test_ok"/>'
        '<testcase classname="tests.test_a.TestA" name="test_bad"><failure message="x"/></testcase>'
        '<testcase classname="tests.test_a" name="test_err"><error/></testcase>'
        '<testcase classname="tests.test_a" name="test_skip[1.5-a/b]"><skipped/></testcase>'
        "</testsuite></testsuites>"
    )
    run = read_junit(path)
    assert run is not None
    assert (run.passed, run.failed, run.errors, run.skipped) == (1, 1, 1, 1)
    assert run.describe() == "1 passed, 1 failed, 1 errors, 1 skipped"
    assert [case.status for case in matching(run.cases, "tests/test_a.py::test_skip[1.5-a/b]")] == [
        "skipped"
    ]
    assert read_junit(tmp_path / "missing.xml") is None
    (tmp_path / "other.xml").write_text("<html/>")
    assert read_junit(tmp_path / "other.xml") is None


@pytest.mark.parametrize(
    ("output", "counts"),
    [
        ("..F\n==== 2 passed, 1 failed in 0.1s ====\n", (2, 1, 0, 0)),
        ("== 1 failed, 4 passed, 2 errors, 1 skipped in 3s ==", (4, 1, 2, 1)),
        ("5 passed in 0.01s", (5, 0, 0, 0)),
        ("Ran 6 tests in 0.002s\n\nFAILED (failures=1, errors=2, skipped=1)\n", (2, 1, 2, 1)),
        ("Ran 3 tests in 0.002s\n\nOK\n", (3, 0, 0, 0)),
    ],
)
def test_summary_lines(output: str, counts: tuple[int, int, int, int]) -> None:
    run = read_summary(output)
    assert run is not None
    assert (run.passed, run.failed, run.errors, run.skipped) == counts


def test_no_summary_line() -> None:
    assert read_summary("collected 0 items\nImportError: no module named calc") is None


def test_test_ids_in_any_spelling() -> None:
    assert normalize("tests/test_a.py::TestX::test_b[1.5/2]") == "tests.test_a.TestX.test_b[1.5/2]"
    cases = (
        CaseResult("tests.test_a.TestX.test_b", "passed"),
        CaseResult("other.test_b", "failed"),
    )
    assert matching(cases, "TestX.test_b") == [cases[0]]
    assert matching(cases, "tests.test_a.TestX::test_b") == [cases[0]]
    assert len(matching(cases, "test_b")) == 2
    assert matching(cases, "est_b") == []
