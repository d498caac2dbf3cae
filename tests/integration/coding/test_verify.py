"""`verify` grades coding references through both phases, in a real sandbox."""

from __future__ import annotations

from pathlib import Path

from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.api import verify_benchmark
from benchyard.runner.two_phase import needs_two_phase
from tests.support import Cli, write_benchmark

STARTER = load_benchmark("starter")
CODING = [scenario for scenario in STARTER.scenarios if scenario.category == "coding"]


def test_the_starter_library_has_both_kinds_of_coding_scenario() -> None:
    kinds = {spec.type for scenario in CODING for spec in scenario.checks}
    assert len(CODING) >= 10
    assert all(needs_two_phase(scenario) for scenario in CODING)
    assert {"code_exec", "tests", "static", "diff_quality"} <= kinds
    repository = [s for s in CODING if any(spec.type == "tests" for spec in s.checks)]
    assert len(repository) >= 3
    assert all(s.fixtures.verification and s.reference_change for s in repository)
    assert all(s.difficulty != "easy" for s in CODING)


def test_verify_passes_every_coding_reference(sandbox_name: str) -> None:
    outcomes = {o.scenario_id: o for o in verify_benchmark(STARTER, sandbox_name)}
    broken = {s.id: outcomes[s.id].reason for s in CODING if not outcomes[s.id].ok}
    assert broken == {}


def test_verify_reports_wrong_references(
    tmp_path: Path, storeless_cli: Cli, sandbox_name: str
) -> None:
    repo = {
        "scenarios/fixtures/repo/calc.py": "def add(a, b):\n    return a - b\n",
        "scenarios/fixtures/wrong.py": "def add(a, b):\n    return a * b\n",
        "scenarios/fixtures/stale.patch": (
            "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
            "-    return a / b\n+    return a + b\n"
        ),
    }
    common = {
        "stimulus": {"task": "fix add"},
        "fixtures": {
            "files": [{"src": "fixtures/repo", "dest": "."}],
            "verification": [{"dest": "test_calc.py", "content": HIDDEN_TEST}],
        },
        "checks": [{"type": "tests", "fail_to_pass": ["TestCalc.test_add"]}],
    }
    scenarios = [
        {"id": "wrong-fix", **common, "reference_change": {"files": [WRONG_FIX]}},
        {"id": "stale-patch", **common, "reference_change": {"patch": "fixtures/stale.patch"}},
        {
            "id": "wrong-code",
            "stimulus": "write add",
            "reference": "```python\ndef add(a, b):\n    return a * b\n```",
            "checks": [{"type": "code_exec", "tests": "assert add(2, 3) == 5"}],
        },
    ]
    bench = write_benchmark(tmp_path / "b", scenarios, files=repo)
    result = storeless_cli("verify", str(bench), "--sandbox", sandbox_name)
    assert result.exit_code == 1, result.output
    broken = dict(line.split(": ", 2)[1:] for line in result.output.splitlines()[:-1])
    assert "FAIL_TO_PASS 0/1 pass (not passing: TestCalc.test_add failed)" in broken["wrong-fix"]
    assert broken["stale-patch"].startswith(
        "the reference patch fixtures/stale.patch does not apply: "
    )
    assert broken["wrong-code"] == (
        "code_exec: a test failed: tests line 1: assert add(2, 3) == 5: AssertionError "
        "(tests in a separate process)"
    )
    assert result.output.splitlines()[-1] == "fixture-bench 1.0: 3 scenarios verified, 3 broken"


HIDDEN_TEST = (
    "import unittest\n\nfrom calc import add\n\n\n"
    "class TestCalc(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)
WRONG_FIX = {"src": "fixtures/wrong.py", "dest": "calc.py"}


def test_validate_names_the_coding_fields_at_fault(tmp_path: Path, storeless_cli: Cli) -> None:
    scenarios = [
        {
            "id": "repo",
            "stimulus": {"task": "fix"},
            "fixtures": {"verification": [{"src": "fixtures/hidden.py", "dest": "t.py"}]},
            "reference_change": {"patch": "fixtures/fix.patch"},
            "checks": [{"type": "tests", "fail_to_pass": "not-a-list"}],
        },
        {
            "id": "function",
            "stimulus": "write f",
            "reference_change": {},
            "checks": [{"type": "code_exec", "tests": "assert f(1) ==\n"}],
        },
    ]
    bench = write_benchmark(tmp_path / "b", scenarios)
    result = storeless_cli("validate", str(bench))
    assert result.exit_code != 0
    lines = result.output.splitlines()
    for expected in (
        "fixtures.verification[0].src: no such file 'fixtures/hidden.py'",
        "reference_change.patch: no such file 'fixtures/fix.patch'",
        "checks[0].fail_to_pass: ",
        "reference_change: give 'files', 'patch' or both",
        "checks[0]: tests line 1: invalid syntax",
    ):
        assert any(
            expected in line and line.startswith("scenarios/main.yaml:") for line in lines
        ), (
            expected,
            lines,
        )
