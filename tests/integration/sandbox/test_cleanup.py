"""Sandboxes leave nothing behind: containers are removed after each command, on Ctrl-C, and
(after a crash) when the next run starts; per-command cgroups are removed; a sandbox that cannot
start is an infrastructure error, retried and never counted against the agent."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.sandbox.bwrap import BubblewrapSandbox, shared_cgroup_pool
from benchyard.sandbox.docker import LABEL, OWNER_LABEL
from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark

SLEEPERS = 3


def _containers_of(pid: int) -> list[str]:
    listed = subprocess.run(
        [
            *("docker", "ps", "--all", "--filter", f"label={LABEL}"),
            *("--format", f'{{{{.Names}}}}\t{{{{.Label "{OWNER_LABEL}"}}}}'),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return [
        line.split("\t")[0]
        for line in listed.stdout.splitlines()
        if line.split("\t")[1].split(":")[1:2] == [str(pid)]
    ]


def _sleeping_run(tmp_path: Path, cli: Cli) -> subprocess.Popen[str]:
    """A real benchyard process whose docker sandboxes sleep, once they all have started."""
    bench = write_benchmark(tmp_path / "bench", [scenario(f"s{i}", "x") for i in range(SLEEPERS)])
    process = cli.process(
        "run", str(bench), "--agent-cmd", "sleep 600", "--sandbox", "docker", "-j", "3", "-q"
    )
    deadline = time.monotonic() + 60
    while len(_containers_of(process.pid)) < SLEEPERS and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(_containers_of(process.pid)) == SLEEPERS, process.stderr
    return process


def test_containers_are_removed_after_each_command(tmp_path: Path, cli: Cli) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x"), scenario("b", "y")])
    result = cli("run", str(bench), "--agent-cmd", "echo x", "--sandbox", "docker", "-q")
    assert result.exit_code == 0, result.output
    assert _containers_of(os.getpid()) == []


def test_ctrl_c_removes_the_running_containers(tmp_path: Path, cli: Cli) -> None:
    process = _sleeping_run(tmp_path, cli)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert _containers_of(process.pid) == []


def test_containers_of_a_killed_run_are_reaped_at_the_next_start(tmp_path: Path, cli: Cli) -> None:
    process = _sleeping_run(tmp_path, cli)
    process.kill()
    process.communicate(timeout=30)
    assert len(_containers_of(process.pid)) == SLEEPERS  # a crash leaves them running
    bench = write_benchmark(tmp_path / "next", [scenario("a", "x")])
    result = cli("run", str(bench), "--agent-cmd", "echo x", "--sandbox", "docker", "-q")
    assert result.exit_code == 0, result.output
    assert _containers_of(process.pid) == []


def test_a_container_that_cannot_start_is_a_retried_error(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    empty = tmp_path / "empty.tar"
    subprocess.run(["tar", "-cf", str(empty), "-T", "/dev/null"], check=True)
    image = f"benchyard/test-empty:{os.getpid()}"
    subprocess.run(["docker", "import", str(empty), image], check=True, capture_output=True)
    bench = write_benchmark(
        tmp_path / "bench",
        [scenario("broken", "x", sandbox={"image": image}), scenario("fine", "x")],
    )
    command = ["--agent-cmd", "echo x", "--sandbox", "docker", "--retries", "1"]
    try:
        result = cli("run", str(bench), *command, "--retry-backoff", "0.01", "-q")
    finally:
        subprocess.run(["docker", "rmi", "--force", image], check=True, capture_output=True)
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    tries = [
        t for t in store.attempts(run.id, include_superseded=True) if t.scenario_id == "broken"
    ]
    assert [(t.try_number, t.superseded, t.verdict) for t in tries] == [
        (1, True, "error"),
        (2, False, "error"),
    ]
    assert all(t.failure_kind == "sandbox_start" for t in tries)
    assert "docker could not start the container" in (tries[-1].cause or "")
    assert [a.verdict for a in store.attempts(run.id) if a.scenario_id == "fine"] == ["passed"]


def test_bwrap_that_cannot_start_is_a_sandbox_start_failure(tmp_path: Path) -> None:
    sandbox = BubblewrapSandbox.open()
    workdir = tmp_path / "work"
    workdir.mkdir()
    with pytest.raises(AttemptFailure) as raised:
        asyncio.run(
            sandbox.run(
                ["/bin/true"],
                workdir=workdir,
                io_dir=tmp_path / "missing",
                env={},
                timeout_sec=10,
                output_cap_bytes=1024,
            )
        )
    assert raised.value.kind == FailureKind.SANDBOX_START
    assert "bwrap could not start the sandbox" in raised.value.message


def test_bwrap_cgroups_are_removed(tmp_path: Path, cli: Cli) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario(f"s{i}", "x") for i in range(4)])
    result = cli("run", str(bench), "--agent-cmd", "echo x", "-q")
    assert result.exit_code == 0, result.output
    pool = shared_cgroup_pool()
    assert pool is not None
    assert all(
        not [child for child in parent.iterdir() if child.is_dir()] for parent in pool.parents
    )
