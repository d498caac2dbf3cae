"""The agent's change as a patch: a git snapshot of the pristine workdir taken before the agent runs,
the diff of the workdir against it afterwards, and applying a patch to a fresh directory.

git runs on the host, on files an agent wrote, but never executes anything from them: its git
directory lives outside the workdir, and no hooks, filters or external diff drivers are
configured. Before the diff, the workdir is walked without following links: every `.git` the agent
left in it is removed (git would read a nested repository's files, wherever its `gitdir:` points),
and a file over WORKDIR_FILE_CAP_BYTES, more than WORKDIR_ENTRIES_CAP entries or directories
nested over WORKDIR_DEPTH_CAP deep refuse the patch (git would read all of a sparse 100 GB file);
the walk and the removal are iterative, so no depth crashes them. Links are recorded as links,
special files (FIFOs, sockets) are left out, and file names that are not UTF-8 are quoted in the
patch as git quotes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.untrusted import remove_tree, walk_tree

GIT_TIMEOUT_SEC = 60.0
PATCH_CAP_BYTES = 4 * 1024 * 1024
WORKDIR_FILE_CAP_BYTES = 64 * 1024 * 1024
WORKDIR_ENTRIES_CAP = 100_000
WORKDIR_DEPTH_CAP = 256  # git's paths must fit in PATH_MAX, and its walk in its stack
ERROR_TAIL_CHARS = 300
# Caches that tools leave behind: never part of the agent's change.
JUNK_PATTERNS = ("__pycache__/", "*.py[cod]", ".pytest_cache/", ".mypy_cache/", ".ruff_cache/")
DIFF_OPTIONS = ("diff-tree", "-r", "--no-renames")
STATUS_NAMES = {"A": "added", "M": "modified", "D": "deleted", "T": "modified"}
_GIT_CONFIG = (
    "core.quotePath=true",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fileMode=true",
    "core.hooksPath=/dev/null",
)


@dataclass(frozen=True)
class FileChange:
    """One file of the agent's patch; line counts are None for a binary file."""

    path: str
    status: str  # added | modified | deleted
    added_lines: int | None
    deleted_lines: int | None


class GitFailed(Exception):
    """A git command failed; the message holds the end of its stderr."""


@dataclass(frozen=True)
class Patch:
    text: str  # a git unified diff, binary-safe; "" when nothing changed or the patch was refused
    changes: tuple[FileChange, ...]
    error: str | None = None  # why the change was refused (too large, unreadable)

    def stored(self) -> str | None:
        """What the attempt keeps: the diff, or the reason it was refused and the files it touched."""
        if self.error is None:
            return self.text or None
        listing = "".join(
            f"#   {change.status} {change.path} (+{_count(change.added_lines)} "
            f"-{_count(change.deleted_lines)})\n"
            for change in self.changes
        )
        return f"# patch not kept: {self.error}\n# files changed:\n{listing}"


def _count(lines: int | None) -> str:
    return "binary" if lines is None else str(lines)


@dataclass(frozen=True)
class Snapshot:
    """The pristine workdir recorded as a git tree, in a git directory outside the workdir."""

    git_dir: Path
    workdir: Path
    tree: str

    async def diff(self) -> Patch:
        """The workdir's change since the snapshot: added, modified and deleted files, binary too."""
        too_much = _too_much_to_collect(self.workdir)
        if too_much is not None:
            return Patch("", (), too_much)
        try:
            after = await _write_tree(self.git_dir, self.workdir)
            arguments = [*DIFF_OPTIONS, "-z", "--raw", "--numstat", self.tree, after]
            listing = await _git(self.git_dir, self.workdir, *arguments)
            changes = _parse_changes(listing)
            if not changes:
                return Patch("", ())
            text = await self._patch_text(after)
        except GitFailed as error:
            return Patch("", (), f"the change could not be collected: {error}")
        if len(text) > PATCH_CAP_BYTES:
            return Patch("", changes, f"the patch is {len(text)} bytes, over {PATCH_CAP_BYTES}")
        return Patch(text.decode("utf-8"), changes)

    async def _patch_text(self, after: str) -> bytes:
        arguments = [*DIFF_OPTIONS, "-p", "--binary", "--no-ext-diff", "--no-textconv"]
        arguments += [self.tree, after]
        text = await _git(self.git_dir, self.workdir, *arguments)
        try:
            text.decode("utf-8")
        except UnicodeDecodeError:
            # Text that is not UTF-8: send every file as a git binary patch (ASCII, still exact).
            (self.git_dir / "info" / "attributes").write_text("* -diff\n", encoding="utf-8")
            text = await _git(self.git_dir, self.workdir, *arguments)
        return text


def _too_much_to_collect(workdir: Path) -> str | None:
    """Remove the `.git` entries the agent left in the workdir; then why the workdir is too big
    for its change to be collected, or None."""
    entries = 0
    try:
        for directory, subdirectories, files in walk_tree(workdir, strict=True):
            if ".git" in subdirectories or ".git" in files:
                remove_tree(directory / ".git", ignore_errors=True)
            subdirectories[:] = [name for name in subdirectories if name != ".git"]
            entries += len(subdirectories) + len(files)
            if entries > WORKDIR_ENTRIES_CAP:
                return f"the workdir holds over {WORKDIR_ENTRIES_CAP} files and directories"
            if subdirectories and len(directory.relative_to(workdir).parts) >= WORKDIR_DEPTH_CAP:
                return f"the workdir nests directories over {WORKDIR_DEPTH_CAP} levels deep"
            for name in files:
                size = _size(os.path.join(directory, name))
                if size > WORKDIR_FILE_CAP_BYTES:
                    return f"{_shown(directory / name, workdir)} is {size} bytes, over " + str(
                        WORKDIR_FILE_CAP_BYTES
                    )
    except OSError as error:
        where = _shown(Path(error.filename), workdir) if error.filename else "the workdir"
        return f"{where} cannot be read: {error.strerror}"
    return None


def _shown(path: Path, workdir: Path) -> str:
    shown = os.path.relpath(path, workdir)
    return shown.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


async def take_snapshot(workdir: Path, git_dir: Path) -> Snapshot:
    """Record the pristine workdir (before the agent runs) in a new git directory `git_dir`."""
    try:
        init = ["init", "-q", "--bare", "--template=", str(git_dir)]
        await _run_git(init, _git_env(), workdir, None)
        (git_dir / "info").mkdir(exist_ok=True)
        (git_dir / "info" / "exclude").write_text("\n".join(JUNK_PATTERNS) + "\n", "utf-8")
        return Snapshot(git_dir, workdir, await _write_tree(git_dir, workdir))
    except (GitFailed, OSError) as error:
        raise AttemptFailure(
            FailureKind.SANDBOX_START, f"could not snapshot the pristine workdir: {error}"
        ) from error


async def apply_patch(patch: str, directory: Path) -> None:
    """Apply a git diff to the files in `directory`; raise GitFailed when it does not apply.

    git refuses paths that leave the directory or go through a symbolic link."""
    env = {**_git_env(), "GIT_CEILING_DIRECTORIES": str(directory.parent)}
    await _run_git(["apply", "--whitespace=nowarn", "-"], env, directory, patch.encode())


async def apply_patch_or_fail(patch: str, workdir: Path, kind: FailureKind, failed: str) -> None:
    """Apply `patch` in `workdir`; when it does not apply, an AttemptFailure of `kind` saying so."""
    try:
        await apply_patch(patch, workdir)
    except GitFailed as error:
        raise AttemptFailure(kind, f"{failed}: {error}") from error


async def _write_tree(git_dir: Path, workdir: Path) -> str:
    await _git(git_dir, workdir, "add", "-A", ".")
    return (await _git(git_dir, workdir, "write-tree")).decode().strip()


async def _git(git_dir: Path, workdir: Path, *arguments: str) -> bytes:
    env = {**_git_env(), "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(workdir)}
    return await _run_git(list(arguments), env, workdir, None)


def _git_env() -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/nonexistent",
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
    }


async def _run_git(
    arguments: list[str], env: dict[str, str], cwd: Path, data: bytes | None
) -> bytes:
    options = [part for setting in _GIT_CONFIG for part in ("-c", setting)]
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            *options,
            *arguments,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.PIPE if data is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError as error:
        raise AttemptFailure(
            FailureKind.SANDBOX_START, "git is needed to collect and apply patches; install git"
        ) from error
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(data), GIT_TIMEOUT_SEC)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise GitFailed(f"git {arguments[0]} took over {GIT_TIMEOUT_SEC:g}s") from None
    if process.returncode != 0:
        tail = stderr.decode("utf-8", errors="replace").strip()[-ERROR_TAIL_CHARS:]
        raise GitFailed(tail or f"git {arguments[0]} exited with code {process.returncode}")
    return stdout


def _parse_changes(listing: bytes) -> tuple[FileChange, ...]:
    """Parse `diff-tree -z --raw --numstat`: raw records (status, path), then numstat records."""
    fields = listing.decode("utf-8", errors="replace").split("\0")
    statuses: dict[str, str] = {}
    counts: dict[str, tuple[int | None, int | None]] = {}
    index = 0
    while index < len(fields) - 1:
        field = fields[index]
        if field.startswith(":"):
            statuses[fields[index + 1]] = STATUS_NAMES.get(field.split()[-1][:1], "modified")
        else:
            added, deleted, path = field.split("\t", 2)
            counts[path] = (_number(added), _number(deleted))
        index += 2 if field.startswith(":") else 1
    return tuple(
        FileChange(path, status, *counts.get(path, (None, None)))
        for path, status in statuses.items()
    )


def _number(text: str) -> int | None:
    return None if text == "-" else int(text)
