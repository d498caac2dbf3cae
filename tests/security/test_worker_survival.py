"""Hostile agents against the queue: an attempt that makes its worker fail must not stop the
queue. An exception that escapes an attempt's task is recorded on that attempt and the worker goes
on; an attempt that was running when two workers were lost (here: the agent kills its worker) is
recorded as failed with that cause, and the attempts queued behind it run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from benchyard.agents.base import AgentResult, AgentTask
from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.api import execute, plan_run
from benchyard.runner.execute import RunSettings
from benchyard.runner.worker import MAX_LOST_WORKERS
from benchyard.store.store import Store
from tests.support import UNSANDBOXED, Cli, scenario, write_benchmark

WORKER_TIMEOUT_SEC = 300


class Poisoned(str):
    """An answer that raises when benchyard takes its first characters to store them."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> str:
        raise RuntimeError("the answer bites whoever reads it")


class PoisoningAgent:
    """An in-process agent whose answer to `poison` raises outside any try of the harness."""

    name = "poisoning"
    needs_workdir = False

    def describe(self) -> dict[str, Any]:
        return {"kind": "poisoning"}

    async def run(self, task: AgentTask) -> AgentResult:
        answer = Poisoned("x") if task.scenario.id == "poison" else "x"
        return AgentResult(answers=[answer], turns=1)


def test_an_exception_escaping_an_attempt_is_recorded_on_it_and_the_worker_goes_on(
    tmp_path: Path, store: Store
) -> None:
    scenarios = [scenario("poison", "x"), scenario("honest", "x")]
    bench = load_benchmark(str(write_benchmark(tmp_path / "b", scenarios)))
    settings = RunSettings(concurrency=1, sandbox="none", work_root=str(tmp_path), retries=0)

    run = execute(store, bench, PoisoningAgent(), plan_run(bench, settings), settings)

    assert run.status == "finished"
    attempts = {a.scenario_id: a for a in store.attempts(run.id)}
    assert attempts["honest"].verdict == "passed"
    poisoned = attempts["poison"]
    assert (poisoned.verdict, poisoned.failure_kind) == ("error", "harness_error")
    assert "RuntimeError: the answer bites whoever reads it" in (poisoned.cause or "")


# The agent's parent is the worker process (tests/integration/queue/helpers.py): `kill -9 $PPID`.
KILLER = 'case "$BENCHYARD_SCENARIO_ID" in a-killer) kill -9 "$PPID"; sleep 5;; esac; echo x'


def _worker(db_url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "benchyard", "worker", "--db", db_url]
    options = ["--drain", "-j", "1", "--poll", "0.05"]
    return subprocess.run(
        command + options,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=WORKER_TIMEOUT_SEC,
        check=False,
    )


def test_an_attempt_that_killed_two_workers_fails_and_the_queue_drains(
    tmp_path: Path, cli: Cli, store: Store, db_url: str
) -> None:
    scenarios = [scenario("a-killer", "x"), scenario("b-honest", "x")]
    bench = write_benchmark(tmp_path / "bench", scenarios)
    queued = cli("run", str(bench), "--agent-cmd", KILLER, *UNSANDBOXED, "--enqueue")
    assert queued.exit_code == 0, queued.output
    run_id = queued.output.strip().splitlines()[-1]

    ends = [_worker(db_url, cli.cwd) for _ in range(MAX_LOST_WORKERS + 1)]

    assert [end.returncode for end in ends[:MAX_LOST_WORKERS]] == [-9] * MAX_LOST_WORKERS
    assert ends[-1].returncode == 0, ends[-1].stdout + ends[-1].stderr
    assert store.get_run(run_id).status == "finished"
    attempts = {a.scenario_id: a for a in store.attempts(run_id)}
    assert attempts["b-honest"].verdict == "passed"
    killer = attempts["a-killer"]
    assert (killer.verdict, killer.failure_kind) == ("failed", "agent_crash")
    assert f"{MAX_LOST_WORKERS} workers were lost" in (killer.cause or "")
