"""An agent in bwrap cannot pass its own failure off as a sandbox that did not start (an
uncounted, retried `sandbox_start` error): bwrap alone says whether it started the command, on a
pipe the command never holds (sandbox/held_start.py)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from benchyard.sandbox.bwrap import BubblewrapSandbox
from benchyard.sandbox.identity import sandbox_user
from benchyard.sandbox.process import ProcessOutcome


def _run(tmp_path: Path, script: str) -> ProcessOutcome:
    """`script` in a real bwrap sandbox, its workdir and io dir the sandbox user's."""
    user = sandbox_user()
    workdir, io_dir = tmp_path / "work", tmp_path / "io"
    for directory in (workdir, io_dir):
        directory.mkdir()
        os.chown(directory, user.uid, user.gid)
    return asyncio.run(
        BubblewrapSandbox.open().run(
            ["/bin/sh", "-c", script],
            workdir=workdir,
            io_dir=io_dir,
            env={"PATH": "/usr/bin:/bin"},
            timeout_sec=30,
            output_cap_bytes=65536,
        )
    )


@pytest.mark.parametrize(
    "script",
    [
        "echo 'bwrap: Cannot mount tmpfs on /newroot/tmp: Operation not permitted' >&2; exit 1",
        "kill -9 1; exit 1",  # the namespace's init: none of its own may kill it
        "exec 3>&-; exec 4>&-; exec 5>&-; exec 6>&-; exit 1",  # bwrap's pipes are not there
    ],
)
def test_a_failing_command_cannot_pass_for_a_sandbox_that_did_not_start(
    tmp_path: Path, script: str
) -> None:
    outcome = _run(tmp_path, script)
    assert outcome.returncode == 1


def test_the_command_holds_none_of_bwrap_s_pipes(tmp_path: Path) -> None:
    outcome = _run(tmp_path, "ls /proc/self/fd")
    assert outcome.returncode == 0, outcome.stderr
    assert sorted(outcome.stdout.split()) == [b"0", b"1", b"2", b"3"]  # 3: ls's own listing
