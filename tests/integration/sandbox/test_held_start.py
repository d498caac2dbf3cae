"""bwrap starts held (sandbox/held_start.py): the harness puts the sandbox's first process in the
command's cgroup and sets its rlimits before anything of the command runs, and bwrap's status
tells a sandbox that never started from a command that failed, whatever the command does."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
from pathlib import Path
from typing import Any

import pytest

from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.sandbox.bwrap import BubblewrapSandbox
from benchyard.sandbox.cgroups import Cgroup, CgroupPool
from benchyard.sandbox.held_start import HeldStart
from benchyard.sandbox.identity import sandbox_user
from benchyard.sandbox.limits import ResourceLimits, SandboxRequest
from benchyard.sandbox.process import ProcessOutcome, run_command


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    """A workdir and io dir of the sandbox user's, as the runner hands them over."""
    user = sandbox_user()
    made = []
    for name in ("work", "io"):
        directory = tmp_path / name
        directory.mkdir()
        os.chown(directory, user.uid, user.gid)
        made.append(directory)
    return made[0], made[1]


def _run(
    sandbox: BubblewrapSandbox, tmp_path: Path, script: str, timeout: float = 30
) -> ProcessOutcome:
    workdir, io_dir = _dirs(tmp_path)
    return asyncio.run(
        sandbox.run(
            ["/bin/sh", "-c", script],
            workdir=workdir,
            io_dir=io_dir,
            env={"PATH": "/usr/bin:/bin"},
            timeout_sec=timeout,
            output_cap_bytes=65536,
        )
    )


def _limits(sandbox: BubblewrapSandbox, **limits: Any) -> BubblewrapSandbox:
    return sandbox.configured(SandboxRequest(limits=ResourceLimits(**limits)))


def _limit_line(limits: str, name: str) -> list[str]:
    [line] = [line for line in limits.splitlines() if line.startswith(name)]
    return line[len(name) :].split()[:2]


def test_the_command_and_what_it_forks_are_born_in_the_cgroup_with_its_rlimits(
    tmp_path: Path,
) -> None:
    sandbox = _limits(BubblewrapSandbox.open(), cpu_sec=7)
    assert sandbox.cgroups is not None
    script = "cat /proc/self/limits; (cat /proc/self/cgroup) & wait"
    outcome = _run(sandbox, tmp_path, script)
    assert outcome.returncode == 0, outcome.stderr
    text = outcome.stdout.decode()
    assert _limit_line(text, "Max cpu time") == ["7", "7"]
    # the forked child is in a cgroup of the command's own, below benchyard's, in every hierarchy
    # that holds the limits (v1: memory and pids; v2: the one)
    pattern = r"\d+:(memory|pids):" if sandbox.cgroups.version == 1 else r"0::"
    placed = [line for line in text.splitlines() if re.match(pattern, line)]
    assert len(placed) == (2 if sandbox.cgroups.version == 1 else 1), text
    assert all(re.search(r"/benchyard-\d+/[0-9a-f]{16}$", line) for line in placed), text


def test_without_a_cgroup_the_memory_and_process_limits_are_rlimits(tmp_path: Path) -> None:
    sandbox = dataclasses.replace(
        _limits(BubblewrapSandbox.open(), memory_mb=300, max_processes=40), cgroups=None
    )
    outcome = _run(sandbox, tmp_path, "cat /proc/self/limits")
    assert outcome.returncode == 0, outcome.stderr
    text = outcome.stdout.decode()
    assert _limit_line(text, "Max address space") == [str(300 * 1024 * 1024)] * 2
    assert _limit_line(text, "Max processes") == ["40", "40"]
    assert _limit_line(text, "Max cpu time") == ["unlimited", "unlimited"]


def test_a_command_killed_at_its_deadline_had_started(tmp_path: Path) -> None:
    outcome = _run(BubblewrapSandbox.open(), tmp_path, "sleep 60", timeout=1)
    assert outcome.timed_out


class _VanishingPool(CgroupPool):
    """Makes each cgroup and removes it at once: the move into it fails, as a cgroup removed
    meanwhile would make it fail."""

    def create(self, limits: ResourceLimits, own_processes: int = 0) -> Cgroup:
        cgroup = super().create(limits, own_processes)
        cgroup.kill_and_remove()
        return cgroup


def test_a_sandbox_that_cannot_be_placed_never_runs_the_command(tmp_path: Path) -> None:
    sandbox = BubblewrapSandbox.open()
    assert sandbox.cgroups is not None
    vanishing = _VanishingPool(sandbox.cgroups.version, sandbox.cgroups.parents)
    with pytest.raises(AttemptFailure) as raised:
        _run(dataclasses.replace(sandbox, cgroups=vanishing), tmp_path, "touch ran")
    assert raised.value.kind == FailureKind.SANDBOX_START
    assert "could not put the sandbox in its cgroup" in raised.value.message
    assert not (tmp_path / "work" / "ran").exists()


@pytest.mark.parametrize(
    ("status", "why"),
    [
        ("", "bwrap named no sandbox process in 0.5 s"),  # silent, as a hung bwrap would be
        ('{ "not-a-pid": 1 }', "bwrap's status names no process"),
    ],
)
def test_a_start_that_names_no_process_is_killed_and_said(
    tmp_path: Path, status: str, why: str
) -> None:
    """HeldStart alone, around a stand-in for bwrap that writes `status` and hangs."""
    held = HeldStart([], start_timeout_sec=0.5)
    status_fd, block_fd = held.child_fds
    written = f"printf '%s\\n' '{status}' > /proc/self/fd/{status_fd}; " if status else ""
    script = f"{written}exec sleep 60"  # dash's `>&N` takes one digit only
    try:
        outcome = asyncio.run(
            run_command(
                ["/bin/sh", "-c", script],
                cwd=tmp_path,
                env={"PATH": "/usr/bin:/bin"},
                timeout_sec=30,
                output_cap_bytes=1024,
                pass_fds=(status_fd, block_fd),
                on_start=held.release,
            )
        )
        started = held.command_started()
    finally:
        held.close()
    assert held.failure is not None and why in held.failure
    assert outcome.returncode == -9  # killed at once, not at the 30 s deadline
    assert not started
