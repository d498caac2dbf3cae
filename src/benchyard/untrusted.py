"""Files in places an agent controls (its workdir, its io dir, a verification workspace that
model-written code ran in): read and written by the harness without being turned against it.

- No link is followed, in the last component or on the way to it: every directory below the
  trusted root is opened with O_NOFOLLOW, one component at a time.
- No open blocks: a FIFO or a device in place of a file is refused, never waited on.
- Only regular files are read, and never more than the caller's cap.
- A file the harness writes for the agent is created fresh (O_EXCL): whatever the agent left
  under that name (a link, a FIFO, a directory) is removed first, never written through.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1024 * 1024


class UntrustedFileRefused(OSError):
    """The name exists but is not a regular file reached without links (a link, a FIFO, ...)."""


def read_capped(path: Path, cap: int, *, offset: int = 0) -> bytes:
    """At most `cap` bytes of the regular file `path` from `offset`. The parent directory is
    trusted (the harness made it); the file itself is not. FileNotFoundError when there is none,
    UntrustedFileRefused when the name is a link or not a regular file."""
    return read_capped_under(path.parent, path.name, cap, offset=offset)


def read_capped_under(root: Path, relative: str, cap: int, *, offset: int = 0) -> bytes:
    """As read_capped, for `relative` below the trusted directory `root`, no link followed on
    the way."""
    parts = _parts(relative)
    directory = _open_directory(root, parts[:-1])
    try:
        fd = _open_file(directory, parts[-1])
    finally:
        os.close(directory)
    try:
        return _read(fd, cap, offset)
    finally:
        os.close(fd)


def write_fresh(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Create `path` anew with `data`, removing whatever the agent left under its name first; the
    parent directory is trusted (the harness made it, the agent cannot replace it)."""
    directory = os.open(path.parent, _DIR_FLAGS)
    try:
        remove_entry(directory, path.name)
        fd = os.open(path.name, _CREATE_FLAGS, mode, dir_fd=directory)
    finally:
        os.close(directory)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)  # whatever the umask says
    finally:
        os.close(fd)


def remove_entry(directory: int, name: str) -> None:
    """Remove `name` from the open directory, whatever it is (a file, a link, a FIFO, a tree);
    nothing when it is not there. Links are removed, never followed."""
    try:
        info = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        _remove_tree(directory, name)
    else:
        os.unlink(name, dir_fd=directory)


def _remove_tree(parent: int, name: str) -> None:
    fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    try:
        for entry in os.listdir(fd):
            remove_entry(fd, entry)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent)


def _parts(relative: str) -> list[str]:
    parts = [part for part in PurePosixPath(relative).parts if part not in ("", ".")]
    if not parts or relative.startswith("/") or ".." in parts:
        raise UntrustedFileRefused(
            errno.EINVAL, "not a relative path inside the directory", relative
        )
    return parts


def _open_directory(root: Path, parts: list[str]) -> int:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            next_fd = _open_no_links(part, _DIR_FLAGS, fd)
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_file(directory: int, name: str) -> int:
    fd = _open_no_links(name, _READ_FLAGS, directory)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise UntrustedFileRefused(errno.EINVAL, f"not a regular file ({_kind(mode)})", name)
    return fd


def _open_no_links(name: str, flags: int, directory: int) -> int:
    """os.open below an open directory; a link (ELOOP, or ENOTDIR for a link where a directory
    was expected) becomes UntrustedFileRefused."""
    try:
        return os.open(name, flags, dir_fd=directory)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
            raise UntrustedFileRefused(error.errno, "a link or not a file", name) from None
        raise


def _read(fd: int, cap: int, offset: int) -> bytes:
    chunks: list[bytes] = []
    left = cap
    position = offset
    while left > 0:
        chunk = os.pread(fd, min(left, _CHUNK), position)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
        position += len(chunk)
    return b"".join(chunks)


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"
