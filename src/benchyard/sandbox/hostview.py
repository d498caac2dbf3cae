"""The host's filesystem as a bwrap sandbox sees it, with as few mounts as will do (setting mounts
up and tearing them down is serialised in the kernel, so each one slows every sandbox starting
at the same time):

- every top-level entry of / bound read-only, except those the sandbox brings its own of
  (/dev, /proc, /tmp, /run) and /var, which is private: host logs, mail, databases and container
  runtimes' state stay out; the sandbox's /var holds only links to its private /tmp and /run;
- of /sys, the device and class trees (what libraries read to count CPUs), not its cgroup mounts;
- no mount that comes and goes (a container's root, a namespace file): binding a directory that
  holds one would copy it, and bwrap fails when it disappears meanwhile. Such a directory is
  recreated and its other entries bound one by one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

PROVIDED = frozenset({"/dev", "/proc", "/sys", "/tmp", "/run", "/var"})
SYS_TREES = ("/sys/devices", "/sys/class")
VAR_LINKS = (("../run", "/var/run"), ("../run/lock", "/var/lock"), ("../tmp", "/var/tmp"))
VOLATILE_FILESYSTEMS = ("overlay", "aufs", "nsfs", "fuse")


class Mount(NamedTuple):
    kind: str  # the filesystem type
    root: Path  # the mounted directory of its filesystem
    point: Path
    options: frozenset[str]  # the super options (a v1 cgroup's controllers, ...)


def host_view_args() -> list[str]:
    """bwrap arguments that build the read-only view of the host (on bwrap's tmpfs root)."""
    args: list[str] = []
    _visit(Path("/"), PROVIDED | volatile_mounts(), args)
    for tree in SYS_TREES:
        args += ["--ro-bind-try", tree, tree]
    args += ["--dir", "/var"]
    for target, link in VAR_LINKS:
        args += ["--symlink", target, link]
    return args


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


def _visit(directory: Path, blocked: frozenset[str], args: list[str]) -> None:
    """Bind `directory`'s entries, recreating (and entering) those that hold a blocked path;
    files at the top level (/.dockerenv, ...) and /lost+found are left out, empty directories
    are made rather than bound."""
    for entry in sorted(os.scandir(directory), key=lambda entry: entry.name):
        path = entry.path
        if path in blocked or path == "/lost+found":
            continue
        if entry.is_symlink():
            args += ["--symlink", os.readlink(path), path]
        elif not entry.is_dir(follow_symlinks=False):
            if directory != Path("/"):
                args += ["--ro-bind-try", path, path]
        elif _empty(path) or any(item.startswith(path + "/") for item in blocked):
            args += ["--dir", path]
            _visit(Path(path), blocked, args)
        else:
            args += ["--ro-bind-try", path, path]


def _empty(path: str) -> bool:
    try:
        with os.scandir(path) as entries:
            return next(entries, None) is None
    except OSError:
        return False
