"""The host user that sandboxed processes run as: never root.

When benchyard runs as root, every agent command and every piece of model-written code runs as an
unprivileged host uid (65534, `nobody`, unless BENCHYARD_SANDBOX_UID / BENCHYARD_SANDBOX_GID name
another): root-owned files stay root's, and host root is never mapped into a sandbox. The
directories such a process must write (its workdir and io dir) are handed over to that user. When
benchyard runs as a normal user, sandboxed processes run as that user.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchyard.sandbox.base import SandboxUnavailable
from benchyard.untrusted import walk_tree

NOBODY = 65534


@dataclass(frozen=True)
class SandboxUser:
    uid: int
    gid: int

    @property
    def is_benchyard(self) -> bool:
        """The sandboxed processes run as benchyard's own user (benchyard is not root)."""
        return self.uid == os.geteuid()

    def process_options(self) -> dict[str, Any]:
        """subprocess options that start a program as this user (none when it is benchyard)."""
        if self.is_benchyard:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def hand_over(self, *paths: Path) -> None:
        """Make each directory tree writable by this user (nothing to do when it is benchyard's
        own); links are changed themselves, never followed."""
        if self.is_benchyard:
            return
        for path in paths:
            os.lchown(path, self.uid, self.gid)
            for directory, subdirectories, files in walk_tree(path):
                for name in (*subdirectories, *files):
                    os.lchown(directory / name, self.uid, self.gid)

    def hand_socket(self, socket_path: Path) -> None:
        """Let this user connect to a Unix socket benchyard listens on (connecting takes write
        permission on it); benchyard's own user needs nothing."""
        if not self.is_benchyard:
            os.lchown(socket_path, self.uid, self.gid)


@functools.cache
def sandbox_user() -> SandboxUser:
    """Who sandboxed processes run as on this host (see the module's docstring)."""
    if os.geteuid() != 0:
        return SandboxUser(os.geteuid(), os.getegid())
    uid = _number("BENCHYARD_SANDBOX_UID", NOBODY)
    gid = _number("BENCHYARD_SANDBOX_GID", uid)
    if uid == 0 or gid == 0:
        raise SandboxUnavailable(
            "BENCHYARD_SANDBOX_UID and BENCHYARD_SANDBOX_GID must not be 0: sandboxes never run as root"
        )
    return SandboxUser(uid, gid)


def _number(variable: str, default: int) -> int:
    value = os.environ.get(variable, "").strip()
    if not value:
        return default
    if not value.isdigit():
        raise SandboxUnavailable(f"{variable} must be a number, not {value!r}")
    return int(value)
