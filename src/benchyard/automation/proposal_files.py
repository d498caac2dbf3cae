"""The files a proposal may touch, and writing them: only inside the benchmark's directory.

A path in a proposal (a scenario file, a fixture file) is relative, at most MAX_PARTS parts of
plain names: no absolute path, no `..`, no part starting with `.` (no `.git`, no hidden file), no
backslash or control character. On disk, no directory on the way and not the file itself may be a
link; files are read and written through directory descriptors opened one part at a time with
O_NOFOLLOW, so a link put in place between the check and the write is refused, never followed.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import uuid
from pathlib import Path, PurePosixPath

from benchyard.errors import BenchyardError
from benchyard.untrusted import UntrustedFileRefused, read_capped_under

MAX_FILE_BYTES = 1024 * 1024
MAX_TOTAL_BYTES = 8 * 1024 * 1024
MAX_FILES = 100
MAX_PARTS = 12
MAX_PART_CHARS = 120
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathRefused(BenchyardError):
    """A path a proposal may not name or write."""


def checked_path(relative: str, what: str = "file") -> str:
    """The path in its normal form (`a/b.yaml`), or PathRefused saying why it is not allowed."""
    if not isinstance(relative, str) or not relative.strip():
        raise PathRefused(f"{what}: give a path relative to the benchmark directory")
    if any(ord(char) < 32 or char in "\\\x7f" for char in relative):
        raise PathRefused(f"{what} '{_shown(relative)}': control characters and '\\' are refused")
    if relative.startswith("/") or (len(relative) > 1 and relative[1] == ":"):
        raise PathRefused(f"{what} '{_shown(relative)}': an absolute path leaves the benchmark")
    parts = [part for part in PurePosixPath(relative).parts if part != "."]
    if not parts:
        raise PathRefused(f"{what} '{_shown(relative)}' names no file")
    for part in parts:
        if part == "..":
            raise PathRefused(f"{what} '{_shown(relative)}': '..' leaves the benchmark directory")
        if part.startswith("."):
            raise PathRefused(f"{what} '{_shown(relative)}': hidden names ('{part}') are refused")
        if len(part) > MAX_PART_CHARS:
            raise PathRefused(f"{what} '{_shown(relative)}': a name of {len(part)} characters")
    if len(parts) > MAX_PARTS:
        raise PathRefused(f"{what} '{_shown(relative)}': more than {MAX_PARTS} directories deep")
    return "/".join(parts)


def _shown(text: str) -> str:
    printable = "".join(char if char.isprintable() else "?" for char in text)
    return printable if len(printable) <= 80 else printable[:77] + "..."


def check_on_disk(root: Path, relative: str) -> None:
    """No link on the way to `relative` under `root`, nor at it; what exists there is a regular
    file (a directory on the way is a directory)."""
    current = root
    parts = relative.split("/")
    for index, part in enumerate(parts):
        current = current / part
        try:
            info = current.lstat()
        except FileNotFoundError:
            return
        if stat.S_ISLNK(info.st_mode):
            raise PathRefused(f"'{relative}': {current.relative_to(root)} is a link")
        last = index == len(parts) - 1
        if last and not stat.S_ISREG(info.st_mode):
            raise PathRefused(f"'{relative}' exists and is not a regular file")
        if not last and not stat.S_ISDIR(info.st_mode):
            raise PathRefused(f"'{relative}': {current.relative_to(root)} is not a directory")


def read_text(root: Path, relative: str) -> str | None:
    """The file's text, or None when there is none; links refused."""
    try:
        data = read_capped_under(root, relative, MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    except UntrustedFileRefused as refused:
        raise PathRefused(f"'{relative}': {refused.strerror}") from None
    except NotADirectoryError:
        raise PathRefused(f"'{relative}': a part of the path is not a directory") from None
    if len(data) > MAX_FILE_BYTES:
        raise PathRefused(f"'{relative}' is over {MAX_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PathRefused(f"'{relative}' is not UTF-8 text") from None


def sha256(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()


def write_text(root: Path, relative: str, text: str | None) -> None:
    """Write (or, with None, remove) `relative` under `root`: directories on the way created,
    none of them, nor the file, followed through a link; the file replaced in one step."""
    parts = relative.split("/")
    directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts[:-1]:
            if text is not None:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=directory)
            try:
                inner = os.open(part, _DIR_FLAGS, dir_fd=directory)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise PathRefused(
                        f"'{relative}': '{part}' is a link or not a directory"
                    ) from None
                raise
            os.close(directory)
            directory = inner
        name = parts[-1]
        try:
            existing = os.stat(name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and not stat.S_ISREG(existing.st_mode):
            raise PathRefused(f"'{relative}' is a link or not a regular file")
        if text is None:
            if existing is not None:
                os.unlink(name, dir_fd=directory)
            return
        mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o644
        temporary = f".{name}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
        fd = os.open(
            temporary,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            mode,
            dir_fd=directory,
        )
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
                out.write(text)
            os.chmod(temporary, mode, dir_fd=directory)
            os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=directory)
            raise
    finally:
        os.close(directory)
