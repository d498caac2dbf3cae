"""Files in places an agent controls (its workdir, its io dir, a verification workspace that
model-written code ran in): read and written by the harness without being turned against it.

- No link is followed, in the last component or on the way to it: every directory below the
  trusted root is opened with O_NOFOLLOW, one component at a time.
- No open blocks: a FIFO or a device in place of a file is refused, never waited on.
- Only regular files are read, and never more than the caller's cap.
- A file the harness writes for the agent is created fresh (O_EXCL): whatever the agent left
  under that name (a link, a FIFO, a directory) is removed first, never written through.
- Trees are walked and removed iteratively, never recursively: a tree nested 100,000 deep is
  removed like any other (`remove_tree`), and walked (`walk_tree`) without a RecursionError.
- Names that come from untrusted data and become paths (an importer's instance ids, files of a
  task) are checked first (`relative_path_problem`), and written only below their root, no link
  followed on the way (`write_new_under`, `copy_tree_under`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1024 * 1024
NAME_MAX_BYTES = 255
PATH_MAX_BYTES = 4096
MAX_COPY_DEPTH = 256
"""How deeply a tree copied out of an untrusted source (a task's tests) may nest."""


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


def remove_socket(path: Path) -> None:
    """Remove a socket the harness served in a directory the agent controls. What the agent put
    in its place (a directory, say) is left to that directory's removal: an attempt's end never
    fails on it, which would turn the agent's failure into an uncounted harness error."""
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def remove_tree(path: Path, *, ignore_errors: bool = False) -> None:
    """Remove `path` (a directory tree, a file or a link) however deep it nests: iteratively,
    one directory open at a time, no link followed; nothing when it is not there. With
    `ignore_errors`, what cannot be removed is left (as shutil.rmtree(ignore_errors=True) does),
    never raised."""
    try:
        parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        if ignore_errors:
            return
        raise
    try:
        remove_entry(parent, path.name)
    except OSError:
        if not ignore_errors:
            raise
    finally:
        os.close(parent)


@dataclass
class _Level:
    """A directory being removed: its name in its parent, its identity, the subdirectories of it
    still to remove (None until it was listed)."""

    name: str
    device: int
    inode: int
    pending: list[str] | None = field(default=None)


def _remove_tree(parent: int, name: str) -> None:
    """Remove the directory `name` of `parent` and everything below it. Only the directory being
    emptied is open: the way back up is its `..`, checked to be the directory it came from (same
    device and inode), so the depth costs neither file descriptors nor stack."""
    current = _open_no_links(name, _DIR_FLAGS, parent)
    levels = [_identified(current, name)]
    try:
        while levels:
            level = levels[-1]
            if level.pending is None:
                level.pending = _unlink_all_but_directories(current)
            if level.pending:
                child = level.pending.pop()
                try:
                    below = _open_no_links(child, _DIR_FLAGS, current)
                except FileNotFoundError:
                    continue
                except UntrustedFileRefused:  # replaced by a link or a file meanwhile
                    os.unlink(child, dir_fd=current)
                    continue
                os.close(current)
                current = below
                levels.append(_identified(current, child))
                continue
            levels.pop()
            above = parent if not levels else os.open("..", _DIR_FLAGS, dir_fd=current)
            os.close(current)
            current = above
            if levels:
                _same_directory(current, levels[-1])
            os.rmdir(level.name, dir_fd=current)
    finally:
        if current != parent:
            os.close(current)


def _identified(fd: int, name: str) -> _Level:
    info = os.fstat(fd)
    return _Level(name, info.st_dev, info.st_ino)


def _same_directory(fd: int, level: _Level) -> None:
    info = os.fstat(fd)
    if (info.st_dev, info.st_ino) != (level.device, level.inode):
        raise UntrustedFileRefused(errno.EXDEV, "the tree moved while it was removed", level.name)


def _unlink_all_but_directories(directory: int) -> list[str]:
    """Unlink every entry of the open directory that is not a directory; its subdirectories."""
    subdirectories = []
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                subdirectories.append(entry.name)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.name, dir_fd=directory)
    return subdirectories


@contextlib.contextmanager
def temporary_directory(prefix: str) -> Iterator[Path]:
    """As tempfile.TemporaryDirectory, for a directory that untrusted code fills (a verifier's
    output): removed with remove_tree, so no depth or leftover makes leaving it raise."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        remove_tree(path, ignore_errors=True)


def walk_tree(root: Path, *, strict: bool = False) -> Iterator[tuple[Path, list[str], list[str]]]:
    """As os.walk(root) top-down, without recursion and without following links: each directory,
    its subdirectories (the caller may prune them in place) and its other entries (files, links
    to anything, FIFOs, ...). A directory that is gone is skipped; one that cannot be listed (too
    long a path, no permission) is skipped too, or raises its OSError when `strict`."""
    stack = [root]
    while stack:
        directory = stack.pop()
        subdirectories: list[str] = []
        others: list[str] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    try:
                        is_directory = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        is_directory = False
                    (subdirectories if is_directory else others).append(entry.name)
        except FileNotFoundError:
            continue
        except OSError:
            if strict:
                raise
            continue
        yield directory, subdirectories, others
        stack.extend(directory / name for name in reversed(subdirectories))


def relative_path_problem(relative: str) -> str | None:
    """Why `relative`, a name taken from untrusted data, cannot be a path inside a directory, or
    None: empty, absolute, `..`, a backslash, a NUL or control character, a name over 255 bytes
    or a path over 4096."""
    if not relative or not relative.strip():
        return "is empty"
    if any(ord(character) < 32 or character == "\x7f" for character in relative):
        return "holds a control character"
    if "\\" in relative:
        return "holds a backslash"
    if relative.startswith("/"):
        return "is an absolute path"
    parts = relative.split("/")
    if ".." in parts:
        return "leads out of its directory (..)"
    if len(relative.encode("utf-8", "surrogateescape")) > PATH_MAX_BYTES:
        return f"is longer than {PATH_MAX_BYTES} bytes"
    if any(len(part.encode("utf-8", "surrogateescape")) > NAME_MAX_BYTES for part in parts):
        return f"has a name longer than {NAME_MAX_BYTES} bytes"
    if not [part for part in parts if part not in ("", ".")]:
        return "names no file"
    return None


def path_name_problem(name: str) -> str | None:
    """As relative_path_problem, for one name (a file or directory, never a path with `/`)."""
    problem = relative_path_problem(name)
    if problem is not None:
        return problem
    if "/" in name:
        return "holds a '/'"
    return "is not a name" if name == "." else None


def write_new_under(root: Path, relative: str, data: bytes, mode: int = 0o644) -> None:
    """Create the file `root/relative` with `data`: the directories on the way are created or
    opened one at a time without following a link, and the file must not exist yet (O_EXCL).
    `relative` must pass relative_path_problem (else UntrustedFileRefused)."""
    parts = _checked_parts(relative)
    directory = _directories_under(root, parts[:-1])
    try:
        fd = os.open(parts[-1], _CREATE_FLAGS, mode, dir_fd=directory)
    finally:
        os.close(directory)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def copy_tree_under(source: Path, root: Path, relative: str) -> None:
    """Copy the file or directory tree `source` to `root/relative`, iteratively: links are
    recreated as links (never followed, `source` itself included), files keep their executable
    bit, anything else is left out. Nothing below `root` is written through a link; a tree nested
    over MAX_COPY_DEPTH levels is refused (UntrustedFileRefused)."""
    _checked_parts(relative)
    info = os.lstat(source)
    if stat.S_ISLNK(info.st_mode):
        raise UntrustedFileRefused(errno.ELOOP, "a link, not a file or directory", str(source))
    if not stat.S_ISDIR(info.st_mode):
        _copy_entry(source, root, relative)
        return
    for directory, subdirectories, others in walk_tree(source):
        if subdirectories and len(directory.relative_to(source).parts) >= MAX_COPY_DEPTH:
            raise UntrustedFileRefused(
                errno.EMLINK, f"directories nest over {MAX_COPY_DEPTH} levels deep", str(source)
            )
        below = PurePosixPath(relative, directory.relative_to(source).as_posix())
        os.close(_directories_under(root, _checked_parts(str(below))))
        for name in sorted(others):
            _copy_entry(directory / name, root, str(below / name))
        subdirectories.sort()


def _copy_entry(source: Path, root: Path, relative: str) -> None:
    info = os.lstat(source)
    if stat.S_ISLNK(info.st_mode):
        parts = _checked_parts(relative)
        directory = _directories_under(root, parts[:-1])
        try:
            os.symlink(os.readlink(source), parts[-1], dir_fd=directory)
        finally:
            os.close(directory)
    elif stat.S_ISREG(info.st_mode):
        fd = os.open(source, _READ_FLAGS)
        try:
            data = _read(fd, info.st_size + 1, 0)
        finally:
            os.close(fd)
        write_new_under(root, relative, data, 0o755 if info.st_mode & 0o111 else 0o644)


def _checked_parts(relative: str) -> list[str]:
    problem = relative_path_problem(relative)
    if problem is not None:
        raise UntrustedFileRefused(errno.EINVAL, f"the path {problem}", relative)
    return _parts(relative)


def _directories_under(root: Path, parts: list[str]) -> int:
    """The directory `root/parts...`, created where missing, opened one component at a time
    without following a link."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
            next_fd = _open_no_links(part, _DIR_FLAGS, fd)
            os.close(fd)
            fd = next_fd
    except BaseException:
        os.close(fd)
        raise
    return fd


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
