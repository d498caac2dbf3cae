"""Helpers for tests: benchmarks written to disk, and the CLI run in-process or as a real process."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from benchyard.cli.app import app
from benchyard.store.records import AttemptRecord, RunRecord


def write_benchmark(
    root: Path,
    scenarios: list[dict[str, Any]],
    *,
    name: str = "fixture-bench",
    version: str = "1.0",
    defaults: dict[str, Any] | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    """Write a benchmark directory: benchmark.yaml, scenarios/main.yaml and any extra files."""
    root.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"name": name, "version": version}
    if defaults:
        manifest["defaults"] = defaults
    (root / "benchmark.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    (root / "scenarios").mkdir(exist_ok=True)
    (root / "scenarios" / "main.yaml").write_text(
        yaml.safe_dump(scenarios, sort_keys=False), encoding="utf-8"
    )
    for relative, content in (files or {}).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


UNSANDBOXED = ("--sandbox", "none", "--allow-unsandboxed")
"""For tests whose agents must touch the host (pid files, state outside the workdir)."""


def scenario(sid: str, answer: str, *, category: str = "general", **extra: Any) -> dict[str, Any]:
    """A one-turn scenario whose reference `answer` passes an `equals` check."""
    return {
        "id": sid,
        "category": category,
        "stimulus": f"say {answer}",
        "checks": [{"type": "equals", "value": answer}],
        "reference": answer,
        **extra,
    }


class Cli:
    """Runs `benchyard` in-process (fast) or as a real process (signals, timeouts)."""

    def __init__(self, db_url: str | None, cwd: Path) -> None:
        self.db_url = db_url  # None: for commands that take no store
        self.cwd = cwd

    def _db_args(self, db: bool | None) -> list[str]:
        """`--db` with the store's URL, unless `db` is False; by default when there is a store."""
        if db is False or (db is None and self.db_url is None):
            return []
        assert self.db_url is not None, "this Cli has no store"
        return ["--db", self.db_url]

    def __call__(self, *args: str, db: bool | None = None) -> Any:
        full = [*args, *self._db_args(db)]
        old = Path.cwd()
        os.chdir(self.cwd)
        try:
            return CliRunner().invoke(app, full, catch_exceptions=False)
        finally:
            os.chdir(old)

    def process(self, *args: str, db: bool | None = None, **popen: Any) -> subprocess.Popen[str]:
        full = [sys.executable, "-m", "benchyard", *args, *self._db_args(db)]
        return subprocess.Popen(
            full, cwd=self.cwd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen
        )


def run_record(run_id: str, **overrides: Any) -> RunRecord:
    """A finished run record with plausible defaults, for tests that write to the store directly."""
    values: dict[str, Any] = {
        "id": run_id,
        "status": "finished",
        "benchmark_name": "b",
        "benchmark_version": "1",
        "benchmark_hash": "sha256:00",
        "benchmark_path": "/nowhere",
        "agent_name": "a",
        "agent_config": {"kind": "command"},
        "settings": {"epochs": 1},
        "benchyard_version": "0",
        "host": "h",
        "started_at": datetime(2026, 1, 1, tzinfo=UTC),
        "planned_attempts": 0,
    }
    return RunRecord(**{**values, **overrides})


def attempt_record(
    run_id: str, attempt_id: str, scenario_id: str, **overrides: Any
) -> AttemptRecord:
    """A final, passed try of epoch 1, for tests that write to the store directly."""
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    values: dict[str, Any] = {
        "id": attempt_id,
        "run_id": run_id,
        "scenario_id": scenario_id,
        "category": "general",
        "epoch": 1,
        "try_number": 1,
        "verdict": "passed",
        "score": 1.0,
        "started_at": moment,
        "finished_at": moment,
        "duration_sec": 1.0,
    }
    return AttemptRecord(**{**values, **overrides})


def pipe_at(number: int) -> tuple[int, int]:
    """A pipe whose read end has the descriptor `number` (free when called); (read, write)."""
    read_end, write_end = os.pipe()
    if read_end != number:
        os.dup2(read_end, number)
        os.close(read_end)
    return number, write_end


def wrapped_run(wrapper: str, args: list[str], cwd: Path, out_variable: str) -> str:
    """Run `python -c WRAPPER ARGS...` (a wrapper that runs benchyard and, at exit, writes what it
    saw to the file named by the environment variable `out_variable`); that file's text. The
    command must exit 0."""
    out = cwd / f"{out_variable.lower()}.txt"
    subprocess.run(
        [sys.executable, "-c", wrapper, *args],
        cwd=cwd,
        env={**os.environ, out_variable: str(out)},
        check=True,
        capture_output=True,
    )
    return out.read_text(encoding="utf-8")
