"""Where a run came from: the agent's git commit and dirty flag, the host, benchyard's version."""

from __future__ import annotations

import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class GitState:
    commit: str | None
    dirty: bool | None
    repo: str | None


def git_state(path: Path) -> GitState:
    """The commit checked out at `path` and whether its tree has changes; all None outside a repository."""
    try:
        top = _git(path, "rev-parse", "--show-toplevel")
        commit = _git(path, "rev-parse", "HEAD")
        dirty = bool(_git(path, "status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.CalledProcessError):
        return GitState(None, None, None)
    return GitState(commit, dirty, top)


def _git(path: Path, *args: str) -> str:
    completed = subprocess.run(
        ["git", "-C", str(path), *args], capture_output=True, text=True, check=True, timeout=10
    )
    return completed.stdout.strip()


def host_name() -> str:
    return socket.gethostname()
