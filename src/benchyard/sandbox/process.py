"""Running a command with a deadline and capped output, and killing its whole process tree."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

READ_CHUNK = 65536
DRAIN_AFTER_KILL_SEC = 2.0
EXIT_POLL_SEC = 1.0  # how often a child's exit is also polled for, whatever its pidfd says
KILL_GRACE_SEC = 5.0  # how long a killed process tree is waited for before the caller goes on


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
    on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
) -> ProcessOutcome:
    """Run `argv` in its own session; at the deadline (or on cancellation) kill its whole tree.
    `pass_fds` stay open in the child under the same numbers; `on_start` is called with the
    process as soon as it has started, in the thread that started it (the deadline counts from
    its return)."""
    process = await _spawn(argv, cwd=cwd, env=env, pass_fds=pass_fds, on_start=on_start)
    try:
        return await _supervise(process, timeout_sec, output_cap_bytes)
    finally:
        # A reader cancelled before it started never took its pipe over (closing twice is safe).
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


async def _supervise(
    process: subprocess.Popen[bytes], timeout_sec: float, output_cap_bytes: int
) -> ProcessOutcome:
    """Wait for the process until the deadline, reading its output meanwhile."""
    assert process.stdout is not None and process.stderr is not None
    watch = ExitWatch(process)
    readers = asyncio.gather(
        _read_pipe(process.stdout, output_cap_bytes), _read_pipe(process.stderr, output_cap_bytes)
    )
    try:
        returncode = await watch.wait(timeout_sec)
        if returncode is None:  # the deadline
            kill_tree(process.pid)
            await watch.reap()
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(
                    process.pid, signal.SIGKILL
                )  # leftovers the agent started in the background
    except asyncio.CancelledError:
        # Reap the killed tree and close the pipes while the loop still runs, so nothing is left
        # for the garbage collector to close after the loop has gone.
        kill_tree(process.pid)
        readers.cancel()
        with contextlib.suppress(asyncio.CancelledError, OSError):
            await readers
        with contextlib.suppress(asyncio.CancelledError):
            await watch.reap()
        raise
    finally:
        watch.close()
    try:
        (stdout, stdout_dropped), (stderr, stderr_dropped) = await asyncio.wait_for(
            readers, DRAIN_AFTER_KILL_SEC
        )
    except TimeoutError:
        # An escaped descendant still holds a pipe open; give up on the rest of its output.
        stdout, stdout_dropped, stderr, stderr_dropped = b"", 0, b"", 0
    return ProcessOutcome(returncode, stdout, stdout_dropped, stderr, stderr_dropped)


async def _spawn(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    pass_fds: tuple[int, ...],
    on_start: Callable[[subprocess.Popen[bytes]], None] | None,
) -> subprocess.Popen[bytes]:
    """Start `argv` from a worker thread. Popen returns only once the child has exec'd, which
    takes milliseconds on a loaded machine: in the event loop, every start would hold up every
    other attempt, and a run of many short or concurrent attempts would start them one by one."""

    def start() -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            pass_fds=pass_fds,
        )
        if on_start is not None:
            try:
                on_start(process)
            except BaseException:
                _kill_and_reap(process)
                raise
        return process

    starting = asyncio.ensure_future(asyncio.to_thread(start))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        starting.add_done_callback(_abandon)
        # The start takes milliseconds: let it end before the caller closes what it passed in
        # `pass_fds` (a number reused meanwhile would be handed to the child).
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.shield(starting)
        raise


def _abandon(starting: asyncio.Future[subprocess.Popen[bytes]]) -> None:
    """Kill the tree of a process whose start was cancelled, once it has started; reap it, and
    drain its pipes, off the loop."""
    if not starting.cancelled() and starting.exception() is None:
        _kill_and_reap(starting.result())


def _kill_and_reap(process: subprocess.Popen[bytes]) -> None:
    """Kill the tree of a process nobody will supervise; reap it, and drain its pipes, in a thread."""
    kill_tree(process.pid)
    threading.Thread(target=process.communicate, daemon=True).start()


class ExitWatch:
    """A child's exit, seen two ways so that it cannot be missed: the loop watches a pidfd of the
    process (Linux; else a thread waits for it, as asyncio's own child watcher does), and a
    waitpid(WNOHANG) every EXIT_POLL_SEC catches an exit whose notification was lost (a descriptor
    closed while registered on the loop and its number reused, say)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.loop = asyncio.get_running_loop()
        self.status: asyncio.Future[int] = self.loop.create_future()
        self._pidfd: int | None = None
        try:
            self._pidfd = os.pidfd_open(process.pid)
        except (AttributeError, OSError):
            threading.Thread(target=self._wait_in_thread, daemon=True).start()
        else:
            self.loop.add_reader(self._pidfd, self.check)

    def check(self) -> None:
        """Settle the status if the process has ended (reaping it: a zombie by then)."""
        returncode = self.process.poll()
        if returncode is not None:
            self.close()
            _settle(self.status, returncode)

    async def wait(self, timeout_sec: float | None) -> int | None:
        """The exit status, or None when the process still runs after `timeout_sec`."""
        deadline = None if timeout_sec is None else self.loop.time() + timeout_sec
        while not self.status.done():
            left = EXIT_POLL_SEC if deadline is None else deadline - self.loop.time()
            if left <= 0:
                return None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.status), min(left, EXIT_POLL_SEC))
            self.check()
        return self.status.result()

    async def reap(self) -> None:
        """Wait for a killed process to end; one that outlives KILL_GRACE_SEC (stuck in the
        kernel) is left to a thread that reaps it when it ends, and the caller goes on."""
        if await self.wait(KILL_GRACE_SEC) is None:
            threading.Thread(target=self.process.wait, daemon=True).start()

    def close(self) -> None:
        """Stop watching the pidfd: its reader removed from the loop before the number is freed."""
        if self._pidfd is not None:
            self.loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None

    def _wait_in_thread(self) -> None:
        returncode = self.process.wait()
        with contextlib.suppress(RuntimeError):  # the loop has closed meanwhile
            self.loop.call_soon_threadsafe(_settle, self.status, returncode)


async def _read_pipe(pipe: IO[bytes], cap: int) -> tuple[bytes, int]:
    """read_capped on one of the child's pipes; the pipe is closed when done or cancelled."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(loop=loop)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe
    )
    try:
        return await read_capped(reader, cap)
    finally:
        transport.close()


def _settle(status: asyncio.Future[int], returncode: int) -> None:
    if not status.done():
        status.set_result(returncode)
