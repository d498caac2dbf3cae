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


def local_benchmarks_named(name: str, start: Path) -> list[Path]:
    """The local benchmarks under `start` (as `benchyard benchmarks` lists them) that `name`
    names: by their directory's name or the name their benchmark.yaml declares."""
    return [path for path in local_benchmarks(start) if name in (path.name, _declared_name(path))]


def _declared_name(directory: Path) -> str | None:
    import yaml

    try:
        manifest = yaml.safe_load((directory / "benchmark.yaml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None  # `validate` says what is wrong with it
    name = manifest.get("name") if isinstance(manifest, dict) else None
    return name if isinstance(name, str) else None
