"""The benchmarks the server knows: the built-in library, benchmarks under its directories, and
those runs in the store were made from. Each is loaded with the loader (spec/loader.py) and kept
until one of its files changes."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from benchyard.benchmarks.loader import load_benchmark
from benchyard.errors import BenchyardError
from benchyard.spec.library import LIBRARY_ROOT, builtin_benchmarks, local_benchmarks
from benchyard.spec.loader import MANIFEST, Benchmark
from benchyard.spec.source_files import read_yaml

Origin = Literal["built-in", "local", "recorded"]


@dataclass(frozen=True)
class KnownBenchmark:
    name: str
    path: Path
    origin: Origin

    @property
    def editable(self) -> bool:
        """Benchmarks on disk are; the built-in library (inside the installed package) is not."""
        return self.origin != "built-in" and not self.path.is_relative_to(LIBRARY_ROOT)


@dataclass(frozen=True)
class Loaded:
    benchmark: Benchmark | None
    problem: str | None  # why it did not load


class BenchmarkCatalog:
    def __init__(self, directories: tuple[Path, ...]) -> None:
        self.directories = directories
        self._loaded: dict[Path, tuple[tuple[tuple[str, int, int], ...], Loaded]] = {}
        self._lock = threading.Lock()

    def known(self, recorded: Sequence[tuple[str, str]] = ()) -> list[KnownBenchmark]:
        """Local benchmarks first, then built-in ones, then paths only runs remember; one per name."""
        found: dict[str, KnownBenchmark] = {}
        for directory in self.directories:
            for path in local_benchmarks(directory):
                name = _manifest_name(path)
                if name is not None:
                    found.setdefault(name, KnownBenchmark(name, path.resolve(), "local"))
        for name, path in builtin_benchmarks().items():
            found.setdefault(name, KnownBenchmark(name, path, "built-in"))
        for name, path_text in recorded:
            path = Path(path_text)
            if name not in found and (path / MANIFEST).is_file():
                found[name] = KnownBenchmark(name, path, "recorded")
        return sorted(found.values(), key=lambda known: known.name)

    def find(self, name: str, recorded: Sequence[tuple[str, str]] = ()) -> KnownBenchmark | None:
        return next((known for known in self.known(recorded) if known.name == name), None)

    def load(self, path: Path) -> Loaded:
        """The benchmark at `path`, loaded again only when one of its files changed."""
        path = path.resolve()
        stamp = _fingerprint(path)
        with self._lock:
            cached = self._loaded.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            loaded = Loaded(load_benchmark(path), None)
        except BenchyardError as error:
            loaded = Loaded(None, str(error))
        with self._lock:
            self._loaded[path] = (stamp, loaded)
        return loaded


def _manifest_name(path: Path) -> str | None:
    try:
        data = read_yaml(path / MANIFEST).data
    except Exception:  # any unreadable manifest: the benchmark page says why when opened
        return path.name
    name = data.get("name") if isinstance(data, dict) else None
    return str(name) if name else path.name


def _fingerprint(root: Path) -> tuple[tuple[str, int, int], ...]:
    """Every file under `root` with its modification time and size (links not followed)."""
    entries = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != ".git")
        for name in sorted(files):
            try:
                stat = os.lstat(os.path.join(directory, name))
            except OSError:
                continue
            entries.append((os.path.join(directory, name), stat.st_mtime_ns, stat.st_size))
    return tuple(entries)
