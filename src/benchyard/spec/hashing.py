"""The content hash that identifies a benchmark's exact version."""

from __future__ import annotations

import hashlib
from pathlib import Path

IGNORED_PARTS = frozenset({"__pycache__", ".git", ".benchyard"})


def _normalised(data: bytes) -> bytes:
    """Text files hash the same whatever their line endings or trailing blank lines."""
    if b"\0" in data:
        return data
    return data.replace(b"\r\n", b"\n").rstrip(b"\n") + b"\n"


def benchmark_files(root: Path) -> list[Path]:
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file()
        and not IGNORED_PARTS.intersection(path.relative_to(root).parts)
        and not path.name.startswith(".")
    )


def content_hash(root: Path) -> str:
    """sha256 over every file's relative path and normalised content, in path order."""
    digest = hashlib.sha256()
    for path in benchmark_files(root):
        relative = path.relative_to(root).as_posix().encode()
        content = _normalised(path.read_bytes())
        digest.update(len(relative).to_bytes(4, "big") + relative)
        digest.update(len(content).to_bytes(8, "big") + content)
    return "sha256:" + digest.hexdigest()
