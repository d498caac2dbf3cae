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
import select
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO, NamedTuple

SYSTEM_ROOTS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYS_TREES = ("/sys/devices", "/sys/class")
VAR_LINKS = (("../run", "/var/run"), ("../run/lock", "/var/lock"), ("../tmp", "/var/tmp"))
VOLATILE_FILESYSTEMS = ("overlay", "aufs", "nsfs", "fuse")
DIRECTORY_MODE = "0755"
MOUNTINFO = "/proc/self/mountinfo"


class Mount(NamedTuple):
    kind: str  # the filesystem type
    root: Path  # the mounted directory of its filesystem
    point: Path
    options: frozenset[str]  # the super options (a v1 cgroup's controllers, ...)
    device: int  # the st_dev of its files (its filesystem's major:minor)


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


def shown_path_args(paths: Iterable[Path], existing: Iterable[str] = ()) -> list[str]:
    """bwrap arguments binding each path read-only at its own place, with the directories on the
    way made traversable (bwrap would copy the host's modes, and a 0700 parent would lock the
    sandbox's user out); `existing` are directories already in the view."""
    args: list[str] = []
    made = {"/", *existing}
    for path in sorted(set(paths)):
        args += parent_dirs_args(path, made)
        args += ["--ro-bind-try", str(path), str(path)]
    return args


def parent_dirs_args(path: Path, made: set[str]) -> list[str]:
    """`--dir` for each directory above `path` not made yet (recorded in `made`). Paths as text:
    this runs for the writable directories of every sandboxed command, where Path objects cost
    ten times as much."""
    args: list[str] = []
    for parent in _parents(str(path)):
        if parent in made or _in_system_root(parent):
            continue
        made.add(parent)
        args += ["--perms", DIRECTORY_MODE, "--dir", parent]
    return args


def _parents(path: str) -> list[str]:
    """The directories above the absolute, normalised `path`, outermost first."""
    names = path.split("/")[1:-1]
    return ["/", *("/" + "/".join(names[: depth + 1]) for depth in range(len(names)))]


def _in_system_root(path: str) -> bool:
    """Whether the absolute `path` lies in one of SYSTEM_ROOTS (by its first component)."""
    return f"/{path.split('/', 2)[1]}" in SYSTEM_ROOTS


def mounts() -> tuple[Mount, ...]:
    """This process's mounts, from /proc/self/mountinfo as it is now."""
    return _TABLE.current().mounts


def filesystem_kind(path: Path) -> str | None:
    """The type of the filesystem `path` lies on now, following links (as the commands that use
    it do); None when no mount holds it."""
    table = _TABLE.current()
    try:
        kind = table.kinds.get(os.stat(path).st_dev)
    except OSError:
        kind = None
    # A device the table does not name (a btrfs subvolume's, a path not there): by mount point.
    return kind if kind is not None else table.kind_at(path.resolve())


class MountTable(NamedTuple):
    mounts: tuple[Mount, ...]
    kinds: dict[int, str]  # each device's filesystem type: its mounts all share its superblock

    @classmethod
    def parse(cls, text: str) -> MountTable:
        found = []
        for line in text.splitlines():
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) > 4 and len(tail) > 2:
                options = frozenset(tail[2].split(","))
                major, _, minor = fields[2].partition(":")
                device = os.makedev(int(major), int(minor))
                found.append(Mount(tail[0], Path(fields[3]), Path(fields[4]), options, device))
        return cls(tuple(found), {mount.device: mount.kind for mount in found})

    def kind_at(self, resolved: Path) -> str | None:
        """The type of the innermost mount holding the absolute, resolved path (the last mounted
        of those at the same place: the one on top)."""
        best = None
        for mount in self.mounts:
            if resolved.is_relative_to(mount.point) and (
                best is None or len(mount.point.parts) >= len(best.point.parts)
            ):
                best = mount
        return best.kind if best is not None else None


class _MountInfo:
    """/proc/self/mountinfo, parsed again only once it has changed. Linux flags every mount and
    unmount in the process's mount namespace on an open mountinfo file as a priority event
    (POLLPRI: proc(5)), which a poll takes note of; so each lookup costs one poll, and still sees
    a mount made since the last (the work root remounted in RAM mid-run, say). A forked child
    starts afresh: it may unshare a namespace of its own, and another thread may hold the lock."""

    def __init__(self) -> None:
        self._forget()
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._file: BinaryIO | None = None  # a forked child's is its parent's, left to it
        self._changes = select.poll()
        self._table = MountTable((), {})

    def current(self) -> MountTable:
        with self._lock:
            if self._file is None:
                self._open()
            elif self._changes.poll(0):
                self._read()
            return self._table

    def _open(self) -> None:
        # Opening the file marks the table as it is then as seen: read it after opening.
        self._file = open(MOUNTINFO, "rb")  # noqa: SIM115 - kept open to be polled
        self._changes.register(self._file, select.POLLPRI)
        self._read()

    def _read(self) -> None:
        assert self._file is not None
        self._file.seek(0)
        self._table = MountTable.parse(os.fsdecode(self._file.read()))


_TABLE = _MountInfo()


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
