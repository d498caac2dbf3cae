"""The content hashes that identify a benchmark's exact version (`content_hash`, over all its
files) and each scenario's (`scenario_hash`, over its definition and the files it names)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from benchyard.errors import BenchyardError
from benchyard.untrusted import walk_tree

IGNORED_PARTS = frozenset({"__pycache__", ".git", ".benchyard"})
CHUNK = 1024 * 1024  # a file larger than this is hashed a chunk at a time


class BenchmarkFilesChanged(BenchyardError):
    """A benchmark's file changed while it was hashed."""


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
        digest.update(len(relative).to_bytes(4, "big") + relative)
        if _is_large(path, inside):
            _hash_large(digest, path)
        else:
            content = _content(path, inside)
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


def _is_large(path: Path, inside: Path) -> bool:
    """A file inside the benchmark larger than a CHUNK: hashed a chunk at a time, so that a JSONL
    file of 100,000 scenarios is never held whole, nor copied to be normalised (issue 27)."""
    try:
        return path.resolve().is_relative_to(inside) and path.stat().st_size > CHUNK
    except OSError:
        return False


def _hash_large(digest: Any, path: Path) -> None:
    """What `_content` would add of the file, its length first: the file is read twice."""
    try:
        length = sum(len(chunk) for chunk in _normalised_chunks(path))
    except OSError as error:
        unreadable = f"unreadable: {error.strerror}".encode()
        digest.update(len(unreadable).to_bytes(8, "big") + unreadable)
        return
    digest.update(length.to_bytes(8, "big"))
    try:
        for chunk in _normalised_chunks(path):
            digest.update(chunk)
    except OSError as error:  # it was read a moment ago
        raise BenchmarkFilesChanged(f"{path} cannot be read again: {error.strerror}") from None


def _normalised_chunks(path: Path) -> Iterator[bytes]:
    """`_normalised` of the file's bytes, a chunk at a time: a CR LF split between chunks and
    trailing line breaks are held back until what follows them is known."""
    with path.open("rb") as handle:
        binary = any(b"\0" in chunk for chunk in iter(lambda: handle.read(CHUNK), b""))
    with path.open("rb") as handle:
        chunks = iter(lambda: handle.read(CHUNK), b"")
        if binary:
            yield from chunks
            return
        held = b""  # line breaks (and a last CR) whose fate depends on what follows
        for chunk in chunks:
            text = held + chunk
            cr = text[-1:] == b"\r"
            text = (text[:-1] if cr else text).replace(b"\r\n", b"\n")
            kept = text.rstrip(b"\n")
            if kept:
                yield kept
            held = text[len(kept) :] + (b"\r" if cr else b"")
        yield held.replace(b"\r\n", b"\n").rstrip(b"\n") + b"\n"


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
