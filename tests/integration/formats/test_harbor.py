"""Harbor and Terminal-Bench v1 tasks: tiny task folders written here, their images built from
the base image, the reference (solve.sh) run once at import, the verifier in a fresh container,
rewards from reward.json (named, kept apart in the report) and reward.txt, or pytest's outcome."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.execute import RunSettings
from benchyard.runner.loop import run_async
from benchyard.runner.two_phase import ChangeGrader
from tests.support import Cli

BASE = "FROM benchyard/sandbox:bookworm\nWORKDIR /app\n"


def harbor_task(root: Path, name: str, test_sh: str, solve_sh: str) -> Path:
    task = root / name
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "solution").mkdir()
    (task / "task.toml").write_text(
        'version = "1.0"\n[verifier]\ntimeout_sec = 120\n[agent]\ntimeout_sec = 60\n'
    )
    (task / "instruction.md").write_text(f"Task {name}: see the tests.\n")
    (task / "environment" / "Dockerfile").write_text(BASE)
    (task / "tests" / "test.sh").write_text(test_sh)
    (task / "solution" / "solve.sh").write_text(solve_sh)
    return task


MULTI_REWARD = """set -u
correct=0; fast=1
[ "$(cat /app/answer.txt 2>/dev/null)" = "42" ] && correct=1
printf '{"correctness": %s, "performance": %s}' "$correct" "$fast" > /logs/verifier/reward.json
"""
SIMPLE = """ok=0
[ "$(cat /app/hello.txt 2>/dev/null)" = "Hello, world!" ] && ok=1
echo $ok > /logs/verifier/reward.txt
"""


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    root = tmp_path / "tasks"
    harbor_task(root, "multi-reward", MULTI_REWARD, "echo 42 > answer.txt\n")
    harbor_task(root, "simple-task", SIMPLE, "printf 'Hello, world!' > /app/hello.txt\n")
    return root


async def _nothing(workdir: Path) -> None:
    return None


def test_harbor_tasks_verify_and_report_named_rewards(
    cli: Cli, tmp_path: Path, tasks: Path
) -> None:
    out = tmp_path / "imported"
    result = cli("import", "harbor", str(tasks), "-o", str(out), db=False)
    assert result.exit_code == 0, result.output
    assert (
        out / "scenarios" / "fixtures" / "multi-reward" / "solution" / "answer.txt"
    ).read_text() == "42\n"
    verified = cli("verify", str(out), db=False)
    assert verified.exit_code == 0 and "2 scenarios verified, 0 broken" in verified.output

    benchmark = load_benchmark(out)
    scenario = next(s for s in benchmark.scenarios if s.id == "multi-reward")
    assert "working directory is the task's /app" in scenario.stimulus.turns[0]
    with ChangeGrader(benchmark, RunSettings(sandbox="bwrap")) as grader:
        graded = run_async(grader.grade(scenario, [""], [], _nothing))  # the agent did nothing
    assert not graded.passed
    assert graded.checks[0].score == 0.5  # correctness 0, performance 1
    assert json.loads(graded.checks[0].reason.removeprefix("rewards: ")) == {
        "correctness": 0.0,
        "performance": 1.0,
    }

    assert cli("run", str(out), "--agent", "oracle").exit_code == 0
    report = json.loads(cli("report", "latest", "--format", "json").output)
    assert report["summary"]["passed"] == 2
    rewards = report["format_metrics"]["rewards"]
    assert rewards["correctness"] == {"mean": 1.0, "attempts": 1}
    assert rewards["reward"] == {"mean": 1.0, "attempts": 1}


def test_terminal_bench_tasks_pass_when_every_test_passes(
    storeless_cli: Cli, tmp_path: Path
) -> None:
    task = tmp_path / "tb" / "hello-world"
    (task / "tests").mkdir(parents=True)
    (task / "task.yaml").write_text(
        "instruction: Write hello.txt containing hello.\nmax_test_timeout_sec: 120\n"
    )
    (task / "Dockerfile").write_text(BASE)
    (task / "docker-compose.yaml").write_text("services: {client: {build: .}}\n")
    (task / "run-tests.sh").write_text(
        "python3 -m pytest -rA -p no:cacheprovider $TEST_DIR/test_outputs.py\n"
    )
    (task / "solution.sh").write_text("echo hello > /app/hello.txt\n")
    (task / "tests" / "test_outputs.py").write_text(
        "from pathlib import Path\n\n\ndef test_file():\n"
        "    assert Path('/app/hello.txt').read_text() == 'hello\\n'\n\n\n"
        "def test_other():\n    assert True\n"
    )
    out = tmp_path / "imported"
    assert (
        storeless_cli("import", "terminal-bench", str(task.parent), "-o", str(out)).exit_code == 0
    )
    verified = storeless_cli("verify", str(out))
    assert verified.exit_code == 0, verified.output
    benchmark = load_benchmark(out)
    with ChangeGrader(benchmark, RunSettings(sandbox="bwrap")) as grader:
        graded = run_async(grader.grade(benchmark.scenarios[0], [""], [], _nothing))
    assert not graded.passed and "1 of 2 did not pass" in (graded.cause or "")


def test_multi_container_tasks_are_named_or_skipped(
    storeless_cli: Cli, tmp_path: Path, tasks: Path
) -> None:
    compose = tasks / "simple-task" / "environment" / "docker-compose.yaml"
    compose.write_text("services: {}\n")
    result = storeless_cli("import", "harbor", str(tasks), "-o", str(tmp_path / "a"))
    assert result.exit_code == 1
    assert f"{compose}: multi-container tasks are not supported" in result.output
    result = storeless_cli(
        "import",
        "harbor",
        str(tasks),
        "-o",
        str(tmp_path / "b"),
        "--option",
        "skip_unsupported=true",
        db=False,
    )
    assert result.exit_code == 0 and "1 scenario" in result.output
