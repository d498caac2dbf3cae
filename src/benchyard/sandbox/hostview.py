"""What of the host a bwrap sandbox sees: an allow-list, never the host's whole filesystem.

- The system directories, read-only: /usr, /etc and the /bin, /sbin and /lib* entries of / (as
  the links or directories they are on the host), and of /sys the device and class trees (what
  libraries read to count CPUs). Nothing else of /: not /home, /root, /srv, /mnt, /media, /opt,
  the host's /var (logs, databases, container runtimes' state) or /run (sockets); the sandbox
  brings its own /dev, /proc, /tmp, /run and /var.
- The paths the run allows on top (the agent's own code, paths declared readable), read-only:
  sandbox/allowlist.py decides which; this module only binds them.
- No mount that comes and goes (a container's root, a namespace file): binding a directory that
  holds one would copy it, and bwrap fails when it disappears meanwhile. Such a directory is
  recreated and its other entries bound one by one. Mounts are kept few: setting them up is
  serialised in the kernel, so each one slows every sandbox starting at the same time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

SYSTEM_ROOTS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYS_TREES = ("/sys/devices", "/sys/class")
VAR_LINKS = (("../run", "/var/run"), ("../run/lock", "/var/lock"), ("../tmp", "/var/tmp"))
VOLATILE_FILESYSTEMS = ("overlay", "aufs", "nsfs", "fuse")
DIRECTORY_MODE = "0755"


class Mount(NamedTuple):
    kind: str  # the filesystem type
    root: Path  # the mounted directory of its filesystem
    point: Path
    options: frozenset[str]  # the super options (a v1 cgroup's controllers, ...)


def system_view_args() -> list[str]:
    """bwrap arguments that build the read-only system part of the view (on bwrap's tmpfs root)."""
    args: list[str] = []
    blocked = volatile_mounts()
    for root in SYSTEM_ROOTS:
        _bind(Path(root), blocked, args)
    for tree in SYS_TREES:
        args += ["--ro-bind-try", tree, tree]
    args += ["--perms", DIRECTORY_MODE, "--dir", "/var"]
    for target, link in VAR_LINKS:
        args += ["--symlink", target, link]
    return args


def shown_path_args(paths: Iterable[Path], existing: Iterable[Path] = ()) -> list[str]:
    """bwrap arguments binding each path read-only at its own place, with the directories on the
    way made traversable (bwrap would copy the host's modes, and a 0700 parent would lock the
    sandbox's user out); `existing` are directories already in the view."""
    args: list[str] = []
    made = {Path("/"), *existing}
    for path in sorted(set(paths)):
        args += parent_dirs_args(path, made)
        args += ["--ro-bind-try", str(path), str(path)]
    return args


def parent_dirs_args(path: Path, made: set[Path]) -> list[str]:
    """`--dir` for each directory above `path` not made yet (recorded in `made`)."""
    args: list[str] = []
    for parent in reversed(path.parents):
        if parent in made or _in_system_root(parent):
            continue
        made.add(parent)
        args += ["--perms", DIRECTORY_MODE, "--dir", str(parent)]
    return args


def _in_system_root(path: Path) -> bool:
    """Whether the absolute `path` lies in one of SYSTEM_ROOTS (by its first component: this
    runs for every directory above every writable path of every attempt)."""
    return len(path.parts) > 1 and f"/{path.parts[1]}" in SYSTEM_ROOTS


def mounts() -> list[Mount]:
    """This process's mounts, from /proc/self/mountinfo."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) > 4 and len(tail) > 2:
            options = frozenset(tail[2].split(","))
            found.append(Mount(tail[0], Path(fields[3]), Path(fields[4]), options))
    return found


def volatile_mounts() -> frozenset[str]:
    """Mount points, other than /, of filesystems that containers mount and unmount."""
    return frozenset(
        str(mount.point)
        for mount in mounts()
        if mount.point != Path("/") and mount.kind.split(".")[0] in VOLATILE_FILESYSTEMS
    )


def _bind(path: Path, blocked: frozenset[str], args: list[str]) -> None:
    """Bind one system root read-only as the host has it: a link as a link, a directory whole
    unless it holds a volatile mount (then recreated, its entries bound one by one)."""
    if path.is_symlink():
        args += ["--symlink", os.readlink(path), str(path)]
    elif path.is_dir():
        if any(item.startswith(f"{path}/") for item in blocked):
            args += ["--perms", DIRECTORY_MODE, "--dir", str(path)]
            _visit(path, blocked, args)
        else:
            args += ["--ro-bind", str(path), str(path)]


def _visit(directory: Path, blocked: frozenset[str], args: list[str]) -> None:
    """Bind `directory`'s entries one by one, skipping the blocked ones."""
    for entry in sorted(os.scandir(directory), key=lambda entry: entry.name):
        if entry.path in blocked:
            continue
        if entry.is_symlink():
            args += ["--symlink", os.readlink(entry.path), entry.path]
        elif entry.is_dir(follow_symlinks=False):
            _bind(Path(entry.path), blocked, args)
        else:
            args += ["--ro-bind-try", entry.path, entry.path]
