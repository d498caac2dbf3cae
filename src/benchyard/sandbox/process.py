"""Running a command with a deadline and capped output, and killing its whole process tree."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path

READ_CHUNK = 65536
DRAIN_AFTER_KILL_SEC = 2.0


@dataclass
class ProcessOutcome:
    returncode: int | None  # None: killed at the deadline
    stdout: bytes
    stdout_dropped: int
    stderr: bytes
    stderr_dropped: int
    limit_hit: str | None = None  # the sandbox limit it ran into: "memory limit of 512 MB"

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


async def read_capped(stream: asyncio.StreamReader, cap: int) -> tuple[bytes, int]:
    """Read a stream to its end, keeping at most `cap` bytes and counting the rest."""
    kept = bytearray()
    dropped = 0
    while chunk := await stream.read(READ_CHUNK):
        room = cap - len(kept)
        if room > 0:
            kept += chunk[:room]
        dropped += max(0, len(chunk) - max(room, 0))
    return bytes(kept), dropped


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def descendants(pid: int) -> list[int]:
    children = _children_map()
    found, stack = [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def kill_tree(pid: int) -> None:
    """SIGKILL the process group led by `pid` and every descendant, even those that left the group."""
    family = descendants(pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    for member in [pid, *family]:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(member, signal.SIGKILL)


async def run_command(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_sec: float,
    output_cap_bytes: int,
    pass_fds: tuple[int, ...] = (),
) -> ProcessOutcome:
    """Run `argv` in its own session; at the deadline (or on cancellation) kill its whole tree.
    `pass_fds` stay open in the child under the same numbers."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        pass_fds=pass_fds,
    )
    assert process.stdout is not None and process.stderr is not None
    readers = asyncio.gather(
        read_capped(process.stdout, output_cap_bytes), read_capped(process.stderr, output_cap_bytes)
    )
    returncode: int | None = None
    try:
        returncode = await asyncio.wait_for(process.wait(), timeout_sec)
    except TimeoutError:
        kill_tree(process.pid)
        await process.wait()
    except asyncio.CancelledError:
        # Reap the killed tree and close the pipes while the loop still runs, so nothing is left
        # for the garbage collector to close after the loop has gone.
        kill_tree(process.pid)
        readers.cancel()
        with contextlib.suppress(asyncio.CancelledError, OSError):
            await readers
        with contextlib.suppress(asyncio.CancelledError, OSError):
            await process.wait()
        raise
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # leftovers the agent started in the background
    try:
        (stdout, stdout_dropped), (stderr, stderr_dropped) = await asyncio.wait_for(
            readers, DRAIN_AFTER_KILL_SEC
        )
    except TimeoutError:
        # An escaped descendant still holds a pipe open; give up on the rest of its output.
        stdout, stdout_dropped, stderr, stderr_dropped = b"", 0, b"", 0
    return ProcessOutcome(returncode, stdout, stdout_dropped, stderr, stderr_dropped)
