"""Worker processes, a deterministic logging agent and report normalisation for the queue tests."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchyard.report.build import build_report
from benchyard.store.store import Store
from tests.support import scenario, write_benchmark


def logging_agent(log: Path, pause_sec: float = 0.02) -> str:
    """A deterministic command agent: right for scenarios named p*, wrong for f*; each execution
    appends `worker-pid workdir scenario attempt` to `log` (its parent is the worker process)."""
    return (
        f'echo "$PPID $BENCHYARD_WORKDIR $BENCHYARD_SCENARIO_ID $BENCHYARD_ATTEMPT_ID" >> {log}; '
        f"sleep {pause_sec}; "
        'case "$BENCHYARD_SCENARIO_ID" in f*) echo wrong;; *) echo right;; esac'
    )


def mixed_benchmark(root: Path, passing: int = 8, failing: int = 4) -> Path:
    scenarios = [scenario(f"p{i:02d}", "right", category="easy") for i in range(passing)]
    scenarios += [scenario(f"f{i:02d}", "right", category="hard") for i in range(failing)]
    return write_benchmark(root, scenarios)


class WorkerProcess:
    """`benchyard worker` as a real process, its log in a file (a pipe could fill up)."""

    def __init__(self, db_url: str, cwd: Path, log: Path, *options: str) -> None:
        self.log = log
        command = [sys.executable, "-m", "benchyard", "worker", "--db", db_url, *options]
        with log.open("a") as sink:
            self.process = subprocess.Popen(
                command, cwd=cwd, stdout=sink, stderr=subprocess.STDOUT, text=True
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def kill(self) -> None:
        """SIGKILL, then reap it (a zombie still looks alive)."""
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> int:
        self.process.terminate()
        return self.process.wait(timeout=30)


def wait_for(condition: Any, timeout_sec: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_sec
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def normalised_report(store: Store, run_id: str) -> dict[str, Any]:
    """A run's report without what differs between two runs of a deterministic agent: ids,
    times, durations, the run's own details."""
    report = build_report(store, store.get_run(run_id)).model_dump(mode="json")
    report.pop("run")
    report["summary"].pop("durations")
    for entry in (*report["failures"], *report["flags"]):
        entry.pop("attempt_id", None)
        entry.pop("run_id", None)
    return report
