"""Where a run came from: the agent's git commit, dirty flag and a hash of its uncommitted diff,
the host, benchyard's version."""

from __future__ import annotations

import hashlib
import shlex
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class GitState:
    commit: str | None
    dirty: bool | None
    repo: str | None
    diff_hash: str | None = None  # "sha256:..." of `git diff HEAD` when dirty, else None


NO_REPOSITORY = GitState(None, None, None)


def git_state(path: Path) -> GitState:
    """The commit checked out at `path` (a directory, or a file in one), whether its tracked files
    have changes, and a hash of those changes; all None outside a repository."""
    where = path.parent if path.is_file() else path
    try:
        top = _git(where, "rev-parse", "--show-toplevel")
        commit = _git(where, "rev-parse", "HEAD")
        dirty = bool(_git(where, "status", "--porcelain", "--untracked-files=no"))
        diff_hash = _diff_hash(where) if dirty else None
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return NO_REPOSITORY
    return GitState(commit, dirty, top, diff_hash)


def agent_git_state(agent: Any, agent_repo: Path | None) -> GitState:
    """The agent's provenance: the repository given (`--agent-repo`), else the repository of the
    script its command runs (the first script named that lies in one; none when the scripts lie
    in no repository), else, for agents without a script, the current directory's."""
    if agent_repo is not None:
        return git_state(agent_repo)
    command = getattr(getattr(agent, "config", None), "command", None)
    scripts = command_scripts(command) if isinstance(command, str) else []
    if not scripts:
        return git_state(Path.cwd())
    for script in scripts:
        state = git_state(script)
        if state.commit is not None:
            return state
    return NO_REPOSITORY


def command_scripts(command: str) -> list[Path]:
    """The existing files a shell command names by absolute path (relative ones are made absolute
    when the agent is built), its arguments before the program itself: in `/venv/bin/python
    /src/agent.py` the script is /src/agent.py."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: the shell will say so when it runs
        words = command.split()
    paths = [Path(word) for word in words if word.startswith("/") and len(word) > 1]
    if paths and words and words[0] == str(paths[0]):
        paths = [*paths[1:], paths[0]]
    return [path for path in dict.fromkeys(paths) if path.is_file()]


def _diff_hash(path: Path) -> str:
    diff = subprocess.run(
        ["git", "-C", str(path), "diff", "HEAD", "--binary", "--no-ext-diff", "--no-color"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    return "sha256:" + hashlib.sha256(diff).hexdigest()


def _git(path: Path, *args: str) -> str:
    completed = subprocess.run(
        ["git", "-C", str(path), *args], capture_output=True, text=True, check=True, timeout=10
    )
    return completed.stdout.strip()


def host_name() -> str:
    return socket.gethostname()
