"""Where `benchyard.yaml` is, found without the models that read it (config.py): a command that
only needs the store's URL imports them only when a project has the file."""

from __future__ import annotations

from pathlib import Path

CONFIG_FILE = "benchyard.yaml"


def find_config(start: Path | None = None) -> Path | None:
    """benchyard.yaml in `start` or the nearest parent directory holding one."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / CONFIG_FILE
        if candidate.is_file():
            return candidate
    return None
