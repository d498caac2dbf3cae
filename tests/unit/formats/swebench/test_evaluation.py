"""SWE-bench grading by the rules of swebench 5.0.2 (the default) and of swebench 4.1, on
evaluation logs: pytest run here on real test files, and a harness log whose summary names its
skipped tests (tests/fixtures/swebench/skipped.log; pytest's own `-rA` summary never names a
skipped test, so only logs in that shape carry SKIPPED ids).

The 5.0 changes: a SKIPPED FAIL_TO_PASS test is a failure, a SKIPPED PASS_TO_PASS test a success,
a truncated parametrized test id matches the logged ids it begins, a log where no test ran is
invalid (`infra_failure`), and the report carries `infra_failure` and `infra_failure_reason`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchyard.formats.swebench.evaluation import (
    APPLIED,
    END,
    NO_TEST_RAN,
    START,
    GradingRules,
    Instance,
    grade_log,
    grading_rules,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "swebench"
TESTS = """
import pytest

def test_add():
    assert 1 + 1 == 2

def test_sub():
    assert 1 - 1 == 1

@pytest.mark.parametrize("text", ["a-parameter-long-enough-to-be-cut-one", "a-parameter-long-enough-to-be-cut-two"])
def test_long(text):
    assert text

@pytest.mark.parametrize("text", ["a-long-value-that-passes", "a-long-value-that-fails"])
def test_mixed(text):
    assert text.endswith("passes")
"""


def _pytest_log(tmp_path: Path, source: str) -> str:
    """The evaluation log of a real pytest run (`-rA`, as the harness runs it) on `source`."""
    (tmp_path / "test_calc.py").write_text(source, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "--tb=no", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return f"{APPLIED}\n{START}\n{done.stdout}\n{END}\n"


def _instance(rules: GradingRules, f2p: list[str], p2p: list[str]) -> Instance:
    return Instance("toy__calc-1", "img", "abc", "", f2p, p2p, rules=rules)


def _skipped_log() -> str:
    return (FIXTURES / "skipped.log").read_text(encoding="utf-8")


def test_swebench_5_0_2_skipped_fail_to_pass_fails() -> None:
    instance = _instance("5.0.2", ["tests/test_calc.py::test_add_floats"], [])
    report = grade_log(instance, _skipped_log())
    assert report.tests_status["FAIL_TO_PASS"] == {
        "success": [],
        "failure": ["tests/test_calc.py::test_add_floats"],
    }
    assert not report.resolved


def test_swebench_5_0_2_skipped_pass_to_pass_succeeds() -> None:
    f2p, p2p = ["tests/test_calc.py::test_add"], ["tests/test_calc.py::test_sub_floats"]
    report = grade_log(_instance("5.0.2", f2p, p2p), _skipped_log())
    assert report.tests_status["PASS_TO_PASS"]["success"] == p2p
    assert report.resolved


def test_swebench_4_1_skipped_test_is_neither_success_nor_failure() -> None:
    f2p = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_add_floats"]
    p2p = ["tests/test_calc.py::test_sub_floats"]
    report = grade_log(_instance("4.1", f2p, p2p), _skipped_log())
    assert report.tests_status["FAIL_TO_PASS"] == {
        "success": ["tests/test_calc.py::test_add"],
        "failure": [],
    }
    assert report.tests_status["PASS_TO_PASS"] == {"success": [], "failure": []}
    assert report.resolved  # the skipped tests left out, as swebench <= 4.1 grades
    assert "infra_failure" not in report.official()  # 4.1 reports have no such fields


def test_swebench_5_0_2_truncated_parametrized_id_prefix_matches(tmp_path: Path) -> None:
    log = _pytest_log(tmp_path, TESTS)
    truncated = "test_calc.py::test_long[a-parameter-long-enough-to-be-c"  # cut in the dataset
    report = grade_log(_instance("5.0.2", [truncated], ["test_calc.py::test_add"]), log)
    assert report.tests_status["FAIL_TO_PASS"]["success"] == [truncated]
    assert report.resolved
    # one failing test among those the prefix begins fails the id
    mixed = "test_calc.py::test_mixed[a-long-value-that-"
    failing = grade_log(_instance("5.0.2", [mixed], []), log)
    assert failing.tests_status["FAIL_TO_PASS"]["failure"] == [mixed]
    # only a parametrized id cut before its closing bracket stands for others
    plain = grade_log(_instance("5.0.2", ["test_calc.py::test_ad"], []), log)
    assert plain.tests_status["FAIL_TO_PASS"]["failure"] == ["test_calc.py::test_ad"]


def test_swebench_4_1_truncated_parametrized_id_is_missing(tmp_path: Path) -> None:
    log = _pytest_log(tmp_path, TESTS)
    truncated = "test_calc.py::test_long[a-parameter-long-enough-to-be-c"
    report = grade_log(_instance("4.1", [truncated], []), log)
    assert report.tests_status["FAIL_TO_PASS"]["failure"] == [truncated]
    assert not report.resolved


def test_swebench_5_0_2_log_where_no_test_ran_is_an_infra_failure(tmp_path: Path) -> None:
    log = _pytest_log(tmp_path, "# the test patch left no test here\n")
    assert "no tests ran" in log
    report = grade_log(_instance("5.0.2", ["test_calc.py::test_add"], []), log)
    assert (report.infra_failure, report.infra_failure_reason) == (True, NO_TEST_RAN)
    assert not report.resolved
    official = report.official()
    assert (official["infra_failure"], official["infra_failure_reason"]) == (True, NO_TEST_RAN)
    assert report.summary().startswith("invalid evaluation (swebench 5.0.2): no test ran")


def test_swebench_4_1_log_where_no_test_ran_fails_every_test(tmp_path: Path) -> None:
    log = _pytest_log(tmp_path, "# the test patch left no test here\n")
    report = grade_log(_instance("4.1", ["test_calc.py::test_add"], []), log)
    assert not report.infra_failure and not report.resolved
    assert report.tests_status["FAIL_TO_PASS"]["failure"] == ["test_calc.py::test_add"]


def test_swebench_5_0_2_report_carries_the_infra_failure_fields(tmp_path: Path) -> None:
    log = _pytest_log(tmp_path, TESTS)
    report = grade_log(_instance("5.0.2", ["test_calc.py::test_add"], []), log)
    assert report.resolved
    official = report.official()
    assert (official["infra_failure"], official["infra_failure_reason"]) == (False, None)
    assert set(official) == {
        "patch_is_None",
        "patch_exists",
        "patch_successfully_applied",
        "resolved",
        "tests_status",
        "infra_failure",
        "infra_failure_reason",
    }


def test_the_rules_default_to_swebench_5_0_2_and_are_named() -> None:
    assert Instance("i", "img", "abc", "", [], []).rules == "5.0.2"
    assert grading_rules("4.1") == "4.1"
    with pytest.raises(ValueError, match=r"'4\.0' is not one of 5\.0\.2, 4\.1"):
        grading_rules("4.0")
