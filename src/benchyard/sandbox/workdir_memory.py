"""A workdir in RAM is memory: files an attempt leaves on a RAM-backed work root (/dev/shm, the
default: runner/execute.py `default_work_root`) count against its memory limit.

Files written to tmpfs are charged to the memory cgroup of the process that writes them, so the
sandbox's cgroup (or container) holds what one command writes within its limit. But each command
gets a fresh cgroup, and what a command leaves behind is no longer charged to the next one: turn
after turn, an attempt limited to 256 MB held 1,040 MB in its workdir. So before each command the
sandbox measures what the workdir and io dir hold in RAM (allocated blocks, hard links once,
without following links) and gives the command only the rest of the attempt's limit; when less
than MIN_HEADROOM_MB is left, the command does not start and the attempt fails, counted
(`resource_limit`), with that cause. The files and the command together never exceed the limit.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.sandbox.hostview import filesystem_kind
from benchyard.sandbox.limits import ResourceLimits
from benchyard.untrusted import walk_tree

RAM_FILESYSTEMS = frozenset({"tmpfs", "ramfs"})
MIN_HEADROOM_MB = 16  # what a command needs of its limit to start at all
MIB = 1024 * 1024


def ram_filesystem(path: Path) -> str | None:
    """The RAM-backed filesystem `path` lies on now (its type), or None when it is on another."""
    kind = filesystem_kind(path)
    return kind if kind in RAM_FILESYSTEMS else None


def held_in_ram(*directories: Path) -> int:
    """Bytes the files under `directories` take in RAM (0 for a directory on a disk)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for directory in directories:
        if ram_filesystem(directory) is None:
            continue
        for parent, subdirectories, others in walk_tree(directory):
            for name in (*subdirectories, *others):
                try:
                    status = os.lstat(parent / name)
                except OSError:
                    continue
                if status.st_nlink > 1 and not os.path.isdir(parent / name):
                    key = (status.st_dev, status.st_ino)
                    if key in seen:
                        continue
                    seen.add(key)
                total += status.st_blocks * 512
    return total


def limits_left(limits: ResourceLimits, workdir: Path, io_dir: Path) -> tuple[ResourceLimits, int]:
    """The limits a command gets once the workdir's and io dir's files in RAM are taken from the
    attempt's memory limit, and those files' size in MB; AttemptFailure (`resource_limit`,
    counted) when too little is left for a command to start."""
    held_mb = held_in_ram(workdir, io_dir) // MIB  # what is under a MB is left out
    if held_mb == 0:
        return limits, 0
    left = limits.memory_mb - held_mb
    if left < MIN_HEADROOM_MB:
        raise AttemptFailure(
            FailureKind.RESOURCE_LIMIT,
            f"{limits.describe_memory()} reached: the workdir and io dir hold {held_mb} MB of "
            "files in RAM (a RAM-backed work root), which count against it, leaving less than "
            f"the {MIN_HEADROOM_MB} MB a command needs",
        )
    return replace(limits, memory_mb=left), held_mb


def describe_hit(limit_hit: str | None, limits: ResourceLimits, held_mb: int) -> str | None:
    """The limit a command ran into, said of the attempt's whole limit when files took part."""
    if limit_hit is None or held_mb == 0 or "memory" not in limit_hit:
        return limit_hit
    return f"{limits.describe_memory()}, {held_mb} MB of it taken by files in RAM in the workdir"
