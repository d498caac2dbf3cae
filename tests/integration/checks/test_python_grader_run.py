"""`python` graders through a real `benchyard run` in the bwrap sandbox: one that passes, one that
fails, one that crashes (a counted failure saying it is the grader's error), and one that goes
looking for the benchmark's references (it sees its own file and its input, nothing else)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchyard.store.store import Store
from tests.support import Cli, write_benchmark

# Outside /tmp: a sandbox's /tmp is private, so a benchmark there would be out of sight anyway.
PROJECTS = Path(__file__).resolve().parents[3] / "build" / "check-projects"

COMPARE = """
def grade(answer, context):
    expected = context["config"].get("expected", context["reference"])
    return {"pass": answer.strip() == expected, "reason": f"{answer.strip()!r} vs {expected!r}"}
"""
CRASH = """
def grade(answer, context):
    return {"pass": int(answer) > 100}
"""
SNOOP = """
import os

def grade(answer, context):
    seen = {"own_dir": sorted(os.listdir(os.path.dirname(os.path.abspath(__file__))))}
    for name, path in context["config"]["paths"].items():
        try:
            with open(path) as file:
                seen[name] = "read " + str(len(file.read())) + " chars"
        except OSError as error:
            seen[name] = type(error).__name__
    try:
        seen["benchmark_dir"] = sorted(os.listdir(context["config"]["benchmark"]))
    except OSError as error:
        seen["benchmark_dir"] = type(error).__name__
    found = [key for key, value in seen.items() if key != "own_dir" and not isinstance(value, str)]
    found += [key for key, value in seen.items() if str(value).startswith("read")]
    return {"pass": not found, "reason": str(seen)}
"""


@pytest.fixture
def project() -> Iterator[Path]:
    PROJECTS.mkdir(parents=True, exist_ok=True)
    directory = Path(tempfile.mkdtemp(dir=PROJECTS))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def test_python_graders_in_a_real_run(project: Path, db_url: str, store: Store) -> None:
    bench = project / "bench"
    secret = "the-answer-to-scenario-two-is-SECRET"
    paths = {
        "scenario_file": str(bench / "scenarios" / "main.yaml"),
        "other_grader": str(bench / "scenarios" / "graders" / "compare.py"),
        "secret_fixture": str(bench / "scenarios" / "fixtures" / "secret.txt"),
    }

    def python_check(file: str, **extra: object) -> dict[str, object]:
        return {"type": "python", "file": f"graders/{file}", "timeout_sec": 20, **extra}

    scenarios = [
        {
            "id": "passes",
            "stimulus": "say 42",
            "reference": "42",
            "checks": [python_check("compare.py")],
        },
        {
            "id": "fails",
            "stimulus": "say 42",
            "reference": "41",
            "checks": [python_check("compare.py", config={"expected": "42"})],
        },
        {
            "id": "crashes",
            "stimulus": "say a number",
            "reference": "many",
            "checks": [python_check("crash.py")],
        },
        {
            "id": "snoops",
            "stimulus": "anything",
            "reference": secret,
            "checks": [python_check("snoop.py", config={"paths": paths, "benchmark": str(bench)})],
        },
    ]
    files = {
        "scenarios/graders/compare.py": COMPARE,
        "scenarios/graders/crash.py": CRASH,
        "scenarios/graders/snoop.py": SNOOP,
        "scenarios/fixtures/secret.txt": secret,
    }
    write_benchmark(bench, scenarios, files=files)
    cli = Cli(db_url, project)
    result = cli("run", str(bench), "--agent", "oracle", "--sandbox", "bwrap", "-q")
    assert result.exit_code in (0, 1), result.output
    attempts = {a.scenario_id: a for a in store.attempts(store.resolve_run("latest").id)}
    verdicts = {sid: attempt.verdict for sid, attempt in attempts.items()}
    assert verdicts == {
        "passes": "passed",
        "fails": "failed",
        "crashes": "failed",
        "snoops": "passed",
    }
    reasons = {sid: attempt.checks[0].reason for sid, attempt in attempts.items()}
    assert reasons["passes"] == "grader graders/compare.py:grade passed: '42' vs '42'"
    assert reasons["fails"] == "grader graders/compare.py:grade failed: '41' vs '42'"
    assert reasons["crashes"] == (
        "grader error: graders/crash.py:grade raised ValueError: invalid literal for int() with "
        "base 10: 'many' at graders/crash.py line 3"
    )
    assert attempts["crashes"].failure_kind is None  # counted against the agent, not an error
    seen = reasons["snoops"].split(": ", 1)[1]
    assert "read " not in seen, seen
    assert "own_dir': ['grader_input.json', 'snoop.py']" in seen, seen
    assert "'benchmark_dir': 'FileNotFoundError'" in seen, seen

    verified = cli("verify", str(bench), "--sandbox", "bwrap", db=False)
    assert verified.exit_code == 1, verified.output
    broken = sorted(line for line in verified.output.splitlines() if line.startswith("broken: "))
    assert broken == [
        "broken: crashes: python: grader error: graders/crash.py:grade raised ValueError: invalid "
        "literal for int() with base 10: 'many' at graders/crash.py line 3",
        "broken: fails: python: grader graders/compare.py:grade failed: '41' vs '42'",
    ]
