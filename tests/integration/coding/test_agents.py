"""Coding agents through the whole run, in a real sandbox: a right fix passes and its patch is
stored and shown; wrong solutions, and agents that tamper with the tests, fail every coding
scenario; the hidden tests are out of the agent's sight."""

from __future__ import annotations

from pathlib import Path

from benchyard.benchmarks.loader import load_benchmark
from benchyard.store.records import AttemptRecord
from benchyard.store.store import Store
from tests.support import Cli, write_benchmark

CODING = sorted(s.id for s in load_benchmark("starter").scenarios if s.category == "coding")
STARTER_ROOT = load_benchmark("starter").root

FIXER = """
import pathlib
source = pathlib.Path("pagination.py")
source.write_text(source.read_text().replace("return total // per_page", "return -(-total // per_page)"))
print("Rounded the page count up.")
"""

WRONG = """
import os, pathlib, re
text = open(os.environ["BENCHYARD_INSTRUCTION_FILE"]).read()
found = re.search(r"(function|class) `(\\w+)", text)
if found and found.group(1) == "class":
    print(f"```python\\nclass {found.group(2)}:\\n    def __init__(self, *args):\\n        pass\\n\\n"
          "    def __getattr__(self, name):\\n        return lambda *args: None\\n```")
elif found:
    print(f"```python\\ndef {found.group(2)}(*args, **kwargs):\\n    return args[0] if args else None\\n```")
for path in pathlib.Path(".").glob("*.py"):
    path.write_text(path.read_text() + "# reviewed: nothing to fix\\n")
print("Done.")
"""

TAMPER = """
import glob, os, pathlib
seen = [path for path in glob.glob(os.environ["HIDDEN_GLOB"]) if open(path).read()]
print("```python\\nimport os\\nos._exit(0)\\n```")
print(f"hidden files seen: {len(seen)}; workdir: {sorted(str(p) for p in pathlib.Path('.').rglob('*'))}")
tests = pathlib.Path("tests")
if tests.is_dir():
    (tests / "__init__.py").write_text(
        "import unittest\\n"
        "def run(self, result=None):\\n"
        "    result.startTest(self)\\n    result.addSuccess(self)\\n    result.stopTest(self)\\n"
        "unittest.TestCase.run = run\\n"
    )
    for path in tests.glob("test_*.py"):
        path.write_text("import unittest\\n\\n\\nclass TestNothing(unittest.TestCase):\\n"
                        "    def test_nothing(self):\\n        pass\\n")
    for name in ("test_hidden.py", "test_partial_pages.py", "test_quoted_fields.py"):
        (tests / name).write_text("")
"""


def _run(cli: Cli, store: Store, tmp_path: Path, agent: str, *options: str) -> list[AttemptRecord]:
    script = tmp_path / "agent.py"
    script.write_text(agent)
    command = f"HIDDEN_GLOB='{STARTER_ROOT}/scenarios/fixtures/coding/*/hidden/*' python3 {script}"
    result = cli("run", "starter", "--agent-cmd", command, "-q", "-j", "4", *options)
    assert result.exit_code == 0, result.output
    return store.attempts(store.resolve_run("latest").id, with_evidence=True)


def _run_failing(
    cli: Cli, store: Store, tmp_path: Path, agent: str, sandbox_name: str
) -> list[AttemptRecord]:
    """Run `agent` on every coding scenario, and check that it failed each (never an error)."""
    attempts = _run(
        cli, store, tmp_path, agent, "--filter", "category:coding", "--sandbox", sandbox_name
    )
    assert sorted(a.scenario_id for a in attempts) == CODING
    not_failed = {a.scenario_id: (a.verdict, a.cause) for a in attempts if a.verdict != "failed"}
    assert not_failed == {}
    return attempts


def test_a_right_fix_passes_and_its_patch_is_stored_and_shown(
    tmp_path: Path, cli: Cli, store: Store, sandbox_name: str
) -> None:
    [attempt] = _run(
        cli, store, tmp_path, FIXER, "--filter", "id:coding-repo-001", "--sandbox", sandbox_name
    )
    assert attempt.verdict == "passed", attempt.cause
    assert attempt.patch is not None
    assert "-    return total // per_page\n+    return -(-total // per_page)\n" in attempt.patch
    shown = cli("show", "latest", "coding-repo-001").output
    assert "patch:\ndiff --git a/pagination.py b/pagination.py" in shown
    assert "+    return -(-total // per_page)" in shown


def test_wrong_solutions_fail_every_coding_scenario(
    tmp_path: Path, cli: Cli, store: Store, sandbox_name: str
) -> None:
    attempts = _run_failing(cli, store, tmp_path, WRONG, sandbox_name)
    repository = [a for a in attempts if a.patch]
    assert len(repository) >= 3
    assert all("+# reviewed: nothing to fix" in (a.patch or "") for a in repository)


def test_agents_that_tamper_with_the_tests_fail_and_never_see_the_hidden_ones(
    tmp_path: Path, cli: Cli, store: Store, sandbox_name: str
) -> None:
    attempts = _run_failing(cli, store, tmp_path, TAMPER, sandbox_name)
    for attempt in attempts:
        assert "hidden files seen: 0;" in (attempt.answer or ""), attempt.answer
        tests_checks = [check for check in attempt.checks if check.check_type == "tests"]
        assert all(not check.passed for check in tests_checks), attempt.scenario_id
        for check in attempt.checks:
            if check.check_type == "code_exec":
                assert "the solution's process ended (exit 0) before it was ready" in check.reason
    tampered = [a for a in attempts if a.patch and "tests/__init__.py" in a.patch]
    assert len(tampered) >= 3
    assert all("test_partial_pages" not in (a.answer or "") for a in attempts)


def test_a_test_command_not_found_is_a_counted_failure_never_a_retried_error(
    tmp_path: Path, cli: Cli, store: Store, sandbox_name: str
) -> None:
    """Exit 127 is what the shell gives for a command it cannot find, and what the agent's code
    can give too (`os._exit(127)` in a test run): it must not turn a failure into an uncounted,
    retried error. The reason keeps the hint for the benchmark's author."""
    scenario = {
        "id": "no-runner",
        "stimulus": {"task": "fix"},
        "reference": "done",
        "checks": [{"type": "tests", "command": "no-such-test-runner"}],
    }
    bench = write_benchmark(tmp_path / "b", [scenario])
    options = ("--sandbox", sandbox_name, "--retries", "1", "--retry-backoff", "0", "-q")
    result = cli("run", str(bench), "--agent", "oracle", *options)
    assert result.exit_code == 0, result.output
    tries = store.attempts(store.resolve_run("latest").id, include_superseded=True)
    assert [(t.verdict, t.failure_kind, t.superseded) for t in tries] == [("failed", None, False)]
    [check] = tries[0].checks
    assert "(exit 127 (command not found?))" in check.reason
