"""bwrap started held: it makes the sandbox, then waits on a pipe (`--block-fd`) before it runs
anything of the command. Meanwhile the harness moves the sandbox's first process into the
command's cgroup and sets its rlimits, so that everything the command runs is born inside them,
with no shell around bwrap or inside it to do that. bwrap's status (`--json-status-fd`) names
that first process, and at the end tells whether bwrap got as far as starting the command (it
reports the command's exit only then): a sandbox that could not start is told apart from a command
that failed, whatever the command writes. The command never holds either pipe: bwrap closes both
before it runs it."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import select
import subprocess
import time

from benchyard.sandbox.cgroups import Cgroup
from benchyard.sandbox.process import kill_tree

READ_CHUNK = 4096
STATUS_LINE_CAP = 65536  # bwrap's first status line is about 300 bytes


class HeldStart:
    """The two pipes between the harness and one bwrap sandbox, and what goes through them."""

    def __init__(self, rlimits: list[tuple[int, int]], start_timeout_sec: float) -> None:
        self.cgroup: Cgroup | None = None  # the command's, when it has one
        self.rlimits = rlimits
        self.start_timeout_sec = start_timeout_sec  # for bwrap to name the sandbox's process
        self.failure: str | None = None  # why the harness could not place the sandbox
        self._status = bytearray()
        self._status_read, self._status_write = os.pipe()
        self._block_read, self._block_write = os.pipe()
        self._open = {self._status_read, self._status_write, self._block_read, self._block_write}

    @property
    def child_fds(self) -> tuple[int, int]:
        """The pipe ends bwrap inherits (under the same numbers)."""
        return self._status_write, self._block_read

    def bwrap_args(self) -> list[str]:
        return ["--json-status-fd", str(self._status_write), "--block-fd", str(self._block_read)]

    def release(self, process: subprocess.Popen[bytes]) -> None:
        """Place the sandbox's first process and let bwrap go on; called as soon as bwrap has
        started. Never raises: a sandbox it could not place is killed, and `failure` says why."""
        self._close(self._status_write, self._block_read)
        try:
            pid = self._first_process()
            if pid is None:
                return  # bwrap ended before it made the sandbox: its exit and stderr say why
            if self.cgroup is not None:
                self.cgroup.add(pid)
            for which, value in self.rlimits:
                resource.prlimit(pid, which, (value, value))
        except (OSError, ValueError) as error:
            self.failure = f"could not put the sandbox in its cgroup and limits: {error}"
            kill_tree(process.pid)
            return
        with contextlib.suppress(OSError):  # bwrap died meanwhile: its exit says why
            os.write(self._block_write, b"x")

    def command_started(self) -> bool:
        """Whether bwrap started the command; asked once bwrap has ended, before `close`."""
        if self._status_read not in self._open:  # its number may be another file's by now
            raise ValueError("bwrap's status was asked for after the pipes were closed")
        os.set_blocking(self._status_read, False)
        with contextlib.suppress(BlockingIOError):
            while len(self._status) < STATUS_LINE_CAP and (
                chunk := os.read(self._status_read, READ_CHUNK)
            ):
                self._status += chunk
        return b'"exit-code"' in self._status

    def close(self) -> None:
        self._close(*self._open)

    def _first_process(self) -> int | None:
        """The sandbox's first process (its host pid), from bwrap's first status line; None when
        bwrap ended without writing one. ValueError when the line names none, or none came in
        time."""
        deadline = time.monotonic() + self.start_timeout_sec
        waiting = select.poll()  # not select(): a descriptor past 1024 is fine
        waiting.register(self._status_read, select.POLLIN)
        while b"\n" not in self._status and len(self._status) < STATUS_LINE_CAP:
            left_ms = (deadline - time.monotonic()) * 1000
            if left_ms <= 0 or not waiting.poll(left_ms):
                raise ValueError(f"bwrap named no sandbox process in {self.start_timeout_sec:g} s")
            chunk = os.read(self._status_read, READ_CHUNK)
            if not chunk:
                return None
            self._status += chunk
        line = bytes(self._status).split(b"\n", 1)[0]
        try:
            pid = json.loads(line)["child-pid"]
        except (KeyError, TypeError):
            pid = None
        if not isinstance(pid, int) or pid <= 0:
            raise ValueError(f"bwrap's status names no process: {line[:200]!r}")
        return pid

    def _close(self, *fds: int) -> None:
        """Close each of `fds` still open here, once (a number closed twice may be another's)."""
        for fd in fds:
            if fd in self._open:
                self._open.discard(fd)
                os.close(fd)
