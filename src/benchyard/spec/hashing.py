"""The content hash that identifies a benchmark's exact version."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from benchyard.untrusted import walk_tree

IGNORED_PARTS = frozenset({"__pycache__", ".git", ".benchyard"})


def _normalised(data: bytes) -> bytes:
    """Text files hash the same whatever their line endings or trailing blank lines."""
    if b"\0" in data:
        return data
    return data.replace(b"\r\n", b"\n").rstrip(b"\n") + b"\n"


def benchmark_files(root: Path) -> list[Path]:
    """The benchmark's files and links, in path order; directories reached through links are not
    walked (they would lead anywhere on the host)."""
    found = []
    for here, subdirectories, others in walk_tree(root):  # iterative: any depth
        subdirectories[:] = [name for name in subdirectories if name not in IGNORED_PARTS]
        found += [here / name for name in others if not name.startswith(".")]
    return sorted(found)


def content_hash(root: Path) -> str:
    """sha256 over every file's relative path and normalised content, in path order; a link that
    leads outside the benchmark counts by where it points, never by the host file's content."""
    digest = hashlib.sha256()
    inside = root.resolve()
    for path in benchmark_files(root):
        relative = path.relative_to(root).as_posix().encode()
        content = _content(path, inside)
        digest.update(len(relative).to_bytes(4, "big") + relative)
        digest.update(len(content).to_bytes(8, "big") + content)
    return "sha256:" + digest.hexdigest()


def _content(path: Path, inside: Path) -> bytes:
    target = path.resolve()
    if path.is_symlink() and (not target.is_relative_to(inside) or not target.is_file()):
        return b"link -> " + os.fsencode(os.readlink(path))
    try:
        return _normalised(path.read_bytes())
    except OSError as error:
        return f"unreadable: {error.strerror}".encode()
