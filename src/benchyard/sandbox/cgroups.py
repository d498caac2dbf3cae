"""Per-command cgroups for the bwrap sandbox: process-count and memory limits that bind root too
(RLIMIT_NPROC does not), and the record of which limit a command ran into.

cgroup v1 (a hierarchy per controller) and v2 (one hierarchy, used when benchyard may enable the
memory and pids controllers below its own cgroup). In each hierarchy, under benchyard's own cgroup:

    benchyard-<pid>/        one per benchyard process; one left by a killed process is reaped later
    └── <id>/               one per sandboxed command, removed when the command ends
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from benchyard.sandbox.hostview import mounts
from benchyard.sandbox.limits import ResourceLimits

CONTROLLERS = ("memory", "pids")
PARENT_PREFIX = "benchyard-"
KILL_WAIT_SEC = 2.0
KILL_POLL_SEC = 0.005
READ_CHUNK = 65536


@dataclass(frozen=True)
class Cgroup:
    """One sandboxed command's cgroup: a directory per hierarchy (v1: memory and pids; v2: one)."""

    version: int
    dirs: tuple[Path, ...]
    limits: ResourceLimits

    def add(self, pid: int) -> None:
        """Move process `pid` into the cgroup; what it forks from then on is born inside."""
        for directory in self.dirs:
            _write(directory / "cgroup.procs", str(pid))

    def limit_hit(self) -> str | None:
        """The limit the command ran into: the memory limit (a process was OOM-killed), else the
        process limit (a fork failed), else None."""
        memory_events = "memory.oom_control" if self.version == 1 else "memory.events"
        if _counter(self.dirs, memory_events, "oom_kill"):
            return self.limits.describe_memory()
        if _counter(self.dirs, "pids.events", "max"):
            return self.limits.describe_processes()
        return None

    def kill_and_remove(self) -> None:
        """SIGKILL whatever is left inside (until empty, or for at most KILL_WAIT_SEC), then remove it."""
        deadline = time.monotonic() + KILL_WAIT_SEC
        while not self._killed_all() and time.monotonic() < deadline:
            time.sleep(KILL_POLL_SEC)
        self._remove()

    async def kill_and_remove_async(self) -> None:
        """kill_and_remove without blocking the event loop while the last processes die: a
        blocking wait here would stall every other attempt of the run."""
        deadline = time.monotonic() + KILL_WAIT_SEC
        while not self._killed_all() and time.monotonic() < deadline:
            await asyncio.sleep(KILL_POLL_SEC)
        await asyncio.to_thread(self._remove)  # rmdir waits on the kernel's cgroup lock

    def _killed_all(self) -> bool:
        """SIGKILL every process inside; True when none was left."""
        members = _members(self.dirs)
        for pid in members:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        return not members

    def _remove(self) -> None:
        for directory in self.dirs:
            with contextlib.suppress(OSError):
                directory.rmdir()  # a cgroup still busy is reaped with its parent later


class CgroupPool:
    """Makes the per-command cgroups of this benchyard process."""

    def __init__(self, version: int, parents: tuple[Path, ...]) -> None:
        self.version = version
        self.parents = parents

    @classmethod
    def discover(cls) -> CgroupPool | None:
        """A pool when benchyard can make cgroups with memory and pids limits here, else None."""
        found = _v1_cgroups() or _v2_cgroup()
        if found is None:
            return None
        version, own_dirs = found
        parents = tuple(own / f"{PARENT_PREFIX}{os.getpid()}" for own in own_dirs)
        try:
            for own, parent in zip(own_dirs, parents, strict=True):
                _reap_leftovers(own, version)
                if version == 2:
                    _enable_controllers(own)
                parent.mkdir(exist_ok=True)
                if version == 2:
                    _enable_controllers(parent)
        except OSError:
            return None
        return cls(version, parents)

    def create(self, limits: ResourceLimits, own_processes: int = 0) -> Cgroup:
        """A fresh cgroup with `limits` applied, with room for `own_processes` of the sandbox's
        own beyond the process limit; raises OSError when it cannot be made."""
        name = uuid.uuid4().hex[:16]
        cgroup = Cgroup(self.version, tuple(parent / name for parent in self.parents), limits)
        try:
            for directory in cgroup.dirs:
                directory.mkdir()
            _write_limits(cgroup, own_processes)
        except OSError:
            cgroup.kill_and_remove()
            raise
        return cgroup

    def close(self) -> None:
        for parent in self.parents:
            with contextlib.suppress(OSError):
                parent.rmdir()


def _write_limits(cgroup: Cgroup, own_processes: int) -> None:
    memory_bytes = str(cgroup.limits.memory_mb * 1024 * 1024)
    pids = str(cgroup.limits.max_processes + own_processes)
    for directory in cgroup.dirs:
        if cgroup.version == 1 and _write_if_present(
            directory / "memory.limit_in_bytes", memory_bytes
        ):
            _write_if_present(directory / "memory.memsw.limit_in_bytes", memory_bytes)  # no swap
        if cgroup.version == 2:
            _write(directory / "memory.max", memory_bytes)
            _write_if_present(directory / "memory.swap.max", "0")
        _write_if_present(directory / "pids.max", pids)


# A cgroup's files are read and written at every sandboxed command: with plain os calls, a third
# of what Path.read_text and write_text cost (no buffer, codec, tty or seek check).


def _write(path: Path, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _write_if_present(path: Path, value: str) -> bool:
    """Write `value` to a cgroup file when the hierarchy has it (its controller); whether it did."""
    try:
        _write(path, value)
    except FileNotFoundError:
        return False
    return True


def _read(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, READ_CHUNK):
            chunks.append(chunk)
        return b"".join(chunks).decode()
    finally:
        os.close(fd)


def _members(dirs: tuple[Path, ...]) -> set[int]:
    found: set[int] = set()
    for directory in dirs:
        with contextlib.suppress(OSError):
            found.update(int(line) for line in _read(directory / "cgroup.procs").split())
    return found


def _counter(dirs: tuple[Path, ...], file_name: str, key: str) -> int:
    """A `key value` counter from a cgroup's events file, 0 when absent."""
    for directory in dirs:
        try:
            lines = _read(directory / file_name).splitlines()
        except OSError:
            continue
        for line in lines:
            name, _, value = line.partition(" ")
            if name == key and value.strip().isdigit():
                return int(value)
    return 0


def _reap_leftovers(own: Path, version: int) -> None:
    """Remove the cgroups a killed benchyard process left behind (their sandboxes died with it)."""
    for parent in own.glob(f"{PARENT_PREFIX}*"):
        pid = parent.name.removeprefix(PARENT_PREFIX)
        if not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        for child in parent.iterdir():
            if child.is_dir():
                Cgroup(version, (child,), ResourceLimits()).kill_and_remove()
        with contextlib.suppress(OSError):
            parent.rmdir()


def _enable_controllers(directory: Path) -> None:
    enabled = (directory / "cgroup.subtree_control").read_text().split()
    missing = [name for name in CONTROLLERS if name not in enabled]
    if missing:
        (directory / "cgroup.subtree_control").write_text(" ".join(f"+{m}" for m in missing))


def _own_paths() -> dict[str, Path]:
    """This process's cgroup per v1 controller, and under '' its v2 cgroup."""
    paths: dict[str, Path] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = Path(path)
    return paths


def _own_dir(mount_root: Path, mount_point: Path, own: Path) -> Path | None:
    try:
        return mount_point / own.relative_to(mount_root)
    except ValueError:
        return None


def _v1_cgroups() -> tuple[int, tuple[Path, ...]] | None:
    own = _own_paths()
    dirs = []
    for controller in CONTROLLERS:
        found = next(
            (
                _own_dir(mount.root, mount.point, own[controller])
                for mount in mounts()
                if mount.kind == "cgroup" and controller in mount.options and controller in own
            ),
            None,
        )
        if found is None or not os.access(found, os.W_OK):
            return None
        dirs.append(found)
    return 1, tuple(dirs)


def _v2_cgroup() -> tuple[int, tuple[Path, ...]] | None:
    own = _own_paths().get("")
    for mount in mounts():
        if mount.kind != "cgroup2" or own is None:
            continue
        directory = _own_dir(mount.root, mount.point, own)
        if directory is None or not os.access(directory, os.W_OK):
            continue
        with contextlib.suppress(OSError):
            available = (directory / "cgroup.controllers").read_text().split()
            if all(name in available for name in CONTROLLERS):
                return 2, (directory,)
    return None
