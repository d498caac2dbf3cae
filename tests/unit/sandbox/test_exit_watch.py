"""A child's end is seen even when the loop never tells of it: the pidfd's notification lost (its
number taken by a stale selector key, as under load), the bounded poll still reaps the child, and
a command past its deadline is killed and reported as timed out."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from benchyard.sandbox.process import ExitWatch, run_command


@pytest.fixture
async def lost_number() -> AsyncIterator[int]:
    """A descriptor number that the running loop's selector still holds a key for, closed (epoll
    forgot it): the next descriptor opened gets it, and a reader added on it is never armed."""
    loop = asyncio.get_running_loop()
    listener = socket.socket()
    number = listener.fileno()
    loop.add_reader(listener, lambda: None)
    listener.close()
    yield number
    loop.remove_reader(number)


def _is_zombie_or_gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"


async def test_an_exit_whose_notification_is_lost_is_still_seen(lost_number: int) -> None:
    process = subprocess.Popen(["sleep", "0.3"], stdin=subprocess.DEVNULL)
    watch = ExitWatch(process)
    try:
        assert watch._pidfd == lost_number  # the pidfd took the stale key's number
        assert await watch.wait(60) == 0
    finally:
        watch.close()
    assert process.returncode == 0
    with pytest.raises(ProcessLookupError):
        os.kill(process.pid, 0)  # reaped: not even a zombie is left


async def test_a_command_past_its_deadline_ends_and_leaves_no_zombie(tmp_path: Path) -> None:
    # A duration no other process on the machine sleeps for (a suite running beside this one
    # starts the same command): the sleepers found below are this test's own.
    duration = f"300.{os.getpid()}"
    outcome = await run_command(
        ["sh", "-c", f"echo started; sleep {duration} & sleep {duration}"],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
        timeout_sec=1,
        output_cap_bytes=1024,
    )
    assert outcome.timed_out
    assert b"started" in outcome.stdout
    command_line = f"sleep\0{duration}\0".encode()
    sleepers = [
        pid for pid in os.listdir("/proc") if pid.isdigit() and _cmdline(pid) == command_line
    ]
    assert all(_is_zombie_or_gone(int(pid)) for pid in sleepers), sleepers


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
