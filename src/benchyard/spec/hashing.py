"""The content hashes that identify a benchmark's exact version (`content_hash`, over all its
files) and each scenario's (`scenario_hash`, over its definition and the files it names)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

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


def scenario_hash(
    definition: Mapping[str, Any], root: Path, base: Path, sources: Iterable[str]
) -> str:
    """sha256 over one scenario: its `definition` as validated (canonical JSON) and, for each file
    it names (`sources`, relative to `base`: fixtures, verification fixtures, reference files, a
    check's grader; every file of a named directory), its path relative to the benchmark's `root`
    and its normalised content, as `content_hash` hashes them. Editing another scenario, even in
    the same file, leaves it unchanged."""
    digest = hashlib.sha256()
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), default=str).encode()
    digest.update(len(text).to_bytes(8, "big") + text)
    inside = root.resolve()
    for path in _named_files(base, sources):
        relative = os.fsencode(os.path.relpath(path, root))
        content = _content(path, inside) if path.exists() or path.is_symlink() else b"missing"
        digest.update(len(relative).to_bytes(4, "big") + relative)
        digest.update(len(content).to_bytes(8, "big") + content)
    return "sha256:" + digest.hexdigest()


def _named_files(base: Path, sources: Iterable[str]) -> list[Path]:
    """The files `sources` name under `base`, a named directory's files walked, in path order."""
    found: set[Path] = set()
    for source in sources:
        path = Path(os.path.normpath(base / source))
        found.update(benchmark_files(path) if path.is_dir() and not path.is_symlink() else [path])
    return sorted(found)
