"""Files that travel to the Ray nodes: a run's benchmark (its fixtures, references and hidden
tests) and the agent's own code, with no filesystem shared between the machines.

The worker packs each into a gzipped tar built the same way every time (sorted entries, no
times, no owners), so equal contents make equal bytes; the tar is named by the sha256 of its
bytes, travels through Ray's object store, and is unpacked once per node into a cache keyed by
that hash (`BENCHYARD_RAY_CACHE`, default `$TMPDIR/benchyard-ray-cache`). A node checks the hash
of the bytes it received, and the benchmark's content hash once unpacked, before using them.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import re
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchyard.errors import BenchyardError
from benchyard.sandbox.allowlist import BIN_DIRS, TOO_WIDE, home_directories

CACHE_VARIABLE = "BENCHYARD_RAY_CACHE"
MAX_BENCHMARK_BYTES = 1024 * 2**20  # compressed
MAX_CODE_BYTES = 64 * 2**20
SKIPPED_EVERYWHERE = frozenset({"__pycache__", ".benchyard"})
SKIPPED_AT_ROOT = frozenset({".git"})  # the benchmark's own history; a fixture's .git is kept
SYSTEM_PREFIXES = tuple(
    Path(p) for p in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/nix")
)
CACHE_KEEP_SEC = 7 * 24 * 3600  # unpacked copies unused for a week are removed


class ShippingError(BenchyardError):
    """What should travel to the nodes cannot (too large, unreadable, corrupted on the way)."""


@dataclass(frozen=True)
class Bundle:
    """Files packed as a gzipped tar, named by the sha256 of its bytes."""

    sha256: str
    data: bytes
    entries: int


# ---- packing (the worker) ---------------------------------------------------------------------


def pack_benchmark(root: Path) -> Bundle:
    """Every file, link and directory of the benchmark (fixtures with their own `.git` and
    dot-files included), but its own `.git`, `__pycache__` and `.benchyard`."""
    bundle = _pack(root, _walk(root), root.name)
    if len(bundle.data) > MAX_BENCHMARK_BYTES:
        raise ShippingError(
            f"the benchmark at {root} packs to {len(bundle.data) / 2**20:.0f} MiB, over the "
            f"{MAX_BENCHMARK_BYTES // 2**20} MiB the Ray executor ships to its nodes"
        )
    return bundle


def pack_code(path: Path) -> Bundle:
    """An agent's code: a directory (its tree) or a single file, under its own name."""
    entries = _walk(path) if path.is_dir() else [path]
    bundle = _pack(path, entries, path.name)
    if len(bundle.data) > MAX_CODE_BYTES:
        raise ShippingError(
            f"the agent's code at {path} packs to {len(bundle.data) / 2**20:.0f} MiB, over the "
            f"{MAX_CODE_BYTES // 2**20} MiB the Ray executor ships to its nodes: keep the agent's "
            "script in a directory of its own"
        )
    return bundle


def _walk(root: Path) -> list[Path]:
    """`root` and everything below it, links not followed, in path order."""
    found = [root]
    for directory, subdirectories, files in os.walk(root):
        here = Path(directory)
        skipped = SKIPPED_EVERYWHERE | (SKIPPED_AT_ROOT if here == root else frozenset())
        subdirectories[:] = sorted(name for name in subdirectories if name not in skipped)
        found += [here / name for name in subdirectories]
        found += [here / name for name in sorted(files)]
    return sorted(found)


def _pack(root: Path, entries: Iterable[Path], name: str) -> Bundle:
    """A tar of `entries` (paths under `root`, or `root` itself), each named `name/<relative>`,
    with no times or owners: the same files always make the same bytes."""
    raw = io.BytesIO()
    count = 0
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in entries:
            relative = path.relative_to(root) if path != root else Path()
            member = Path(name, relative).as_posix()
            try:
                info = tar.gettarinfo(str(path), arcname=member)
            except OSError as error:
                raise ShippingError(f"cannot read {path} to ship it: {error.strerror}") from None
            if not (info.isfile() or info.isdir() or info.issym()):
                continue  # FIFOs, sockets, devices: never part of a benchmark or an agent
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            info.pax_headers = {}
            if info.isfile():
                with path.open("rb") as content:
                    tar.addfile(info, content)
            else:
                tar.addfile(info)
            count += 1
    data = gzip.compress(raw.getvalue(), compresslevel=1, mtime=0)
    return Bundle("sha256:" + hashlib.sha256(data).hexdigest(), data, count)


# ---- the agent's own code -----------------------------------------------------------------------


def code_to_ship(named: Iterable[Path], walls: Sequence[Path]) -> list[Path]:
    """The agent's own code among the paths its command names, as the sandbox would show it
    (sandbox/allowlist.py): a script's directory, or the file alone where that directory is too
    wide (a home, /tmp, the project directory, one holding the benchmark or the store). Programs
    installed on the machine (in system directories, or an executable in a `bin` directory such
    as a virtualenv's interpreter) are not shipped: they must be installed on every node."""
    units: set[Path] = set()
    for path in named:
        if not path.is_absolute() or not path.exists() or _installed(path):
            continue
        if path.is_dir():
            if not _too_wide(path, walls):
                units.add(path)
            continue
        units.add(path if _too_wide(path.parent, walls) else path.parent)
    return sorted(u for u in units if not any(u != o and u.is_relative_to(o) for o in units))


def _installed(path: Path) -> bool:
    if any(path.is_relative_to(prefix) for prefix in SYSTEM_PREFIXES):
        return True
    return path.parent.name in BIN_DIRS and os.access(path, os.X_OK)


def _too_wide(directory: Path, walls: Sequence[Path]) -> bool:
    if directory in TOO_WIDE or directory in home_directories() or len(directory.parts) < 3:
        return True
    return any(wall.is_relative_to(directory) for wall in walls)


_AFTER_PATH = r"(?=$|[/\s;|&()<>'\"`])"


def relocated(text: str, moves: Mapping[str, str]) -> str:
    """`text` (a command, a path) with each path of `moves` replaced by where it now lies, where it
    stands as a whole path or a prefix of one (never inside a longer name)."""
    for original in sorted(moves, key=len, reverse=True):
        pattern = re.compile(rf"(?<![\w./-]){re.escape(original)}{_AFTER_PATH}")
        replacement = moves[original]
        text = pattern.sub(lambda _match: replacement, text)  # noqa: B023 - used at once
    return text


def relocated_agent_config(config: Mapping[str, Any], moves: Mapping[str, str]) -> dict[str, Any]:
    """A command agent's configuration with its shipped code where a node unpacked it."""
    moved = dict(config)
    if not moves or moved.get("kind", "command") != "command":
        return moved
    if isinstance(moved.get("command"), str):
        moved["command"] = relocated(moved["command"], moves)
    if isinstance(moved.get("readable"), list):
        moved["readable"] = [
            relocated(path, moves) if isinstance(path, str) else path for path in moved["readable"]
        ]
    return moved


# ---- unpacking (a node) -----------------------------------------------------------------------


def cache_root() -> Path:
    configured = os.environ.get(CACHE_VARIABLE)
    return Path(configured) if configured else Path(tempfile.gettempdir(), "benchyard-ray-cache")


def unpacked(kind: str, sha256: str, fetch: Callable[[], bytes], root: Path | None = None) -> Path:
    """The directory holding bundle `sha256` unpacked (one entry, the packed name), fetching its
    bytes with `fetch` only when this node has not unpacked it yet. Several processes of a node
    may unpack it at once: each into a directory of its own, the first rename wins."""
    base = (root or cache_root()) / kind
    target = base / sha256.removeprefix("sha256:")
    if target.is_dir():
        with contextlib.suppress(OSError):
            os.utime(target)
        return target
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = fetch()
    received = "sha256:" + hashlib.sha256(data).hexdigest()
    if received != sha256:
        raise ShippingError(f"the {kind} bundle arrived as {received[:19]}, not {sha256[:19]}")
    staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=base))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            tar.extractall(staging, filter="tar")
        staging.chmod(0o755)
        try:
            staging.rename(target)
        except OSError:
            if not target.is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def only_entry(directory: Path) -> Path:
    """The one entry a bundle unpacks to (the packed directory or file)."""
    entries = [entry for entry in directory.iterdir() if not entry.name.startswith(".unpacking-")]
    if len(entries) != 1:
        raise ShippingError(f"{directory} should hold one unpacked entry, not {len(entries)}")
    return entries[0]


def forget_unused(root: Path | None = None, keep_sec: float = CACHE_KEEP_SEC) -> None:
    """Remove the unpacked bundles no process of this node used for `keep_sec`."""
    now = time.time()
    for entry in _cached(root or cache_root()):
        with contextlib.suppress(OSError):
            if now - entry.stat().st_mtime > keep_sec:
                shutil.rmtree(entry, ignore_errors=True)


def _cached(root: Path) -> Iterator[Path]:
    for kind in ("bench", "code"):
        with contextlib.suppress(OSError):
            yield from (root / kind).iterdir()
