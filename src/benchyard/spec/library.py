"""Finding benchmarks: the built-in library shipped in the package, and those under a directory."""

from __future__ import annotations

import os
from pathlib import Path

LIBRARY_ROOT = Path(__file__).resolve().parent.parent / "library"
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".benchyard",
        "site-packages",
        "fixtures",
    }
)


def builtin_benchmarks() -> dict[str, Path]:
    """Name -> directory of each benchmark shipped inside benchyard."""
    return {path.parent.name: path.parent for path in sorted(LIBRARY_ROOT.glob("*/benchmark.yaml"))}


def local_benchmarks(start: Path, max_depth: int = 4) -> list[Path]:
    """Directories holding a benchmark.yaml under `start`, skipping virtualenvs and VCS folders."""
    found = []
    start = start.resolve()
    for directory, subdirs, files in os.walk(start):
        depth = len(Path(directory).relative_to(start).parts)
        subdirs[:] = [d for d in sorted(subdirs) if d not in SKIPPED_DIRS and not d.startswith(".")]
        if depth >= max_depth:
            subdirs[:] = []
        if "benchmark.yaml" in files and not Path(directory).is_relative_to(LIBRARY_ROOT):
            found.append(Path(directory))
    return found
