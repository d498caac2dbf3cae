"""Registry of import formats. A format is one module with an importer object; the built-ins are
listed here as `"module:attribute"` strings, imported only when used, and other packages add
theirs under the entry-point group `benchyard.importers` (the entry point's name is the format's
name, its value `"package.module:IMPORTER"`)."""

from __future__ import annotations

import difflib
import importlib
from importlib.metadata import entry_points
from typing import cast

from benchyard.errors import BenchyardError
from benchyard.importers.base import Importer

ENTRY_POINT_GROUP = "benchyard.importers"
BUILTIN: dict[str, str] = {
    "humaneval": "benchyard.formats.humaneval.importer:IMPORTER",
    "mbpp": "benchyard.formats.mbpp.importer:IMPORTER",
    "gsm8k": "benchyard.formats.gsm8k.importer:IMPORTER",
    "ifeval": "benchyard.formats.ifeval.importer:IMPORTER",
    "bfcl": "benchyard.formats.bfcl.importer:IMPORTER",
    "swe-bench": "benchyard.formats.swebench.importer:IMPORTER",
    "harbor": "benchyard.formats.harbor.importer:IMPORTER",
    "terminal-bench": "benchyard.formats.harbor.importer:TERMINAL_BENCH",
    "itbench": "benchyard.formats.itbench.importer:IMPORTER",  # SRE incidents, simulated (docs/sre.md)
}

_loaded: dict[str, Importer] = {}


class UnknownFormat(BenchyardError):
    """No importer by that name."""


def format_names() -> list[str]:
    """Every format: the built-ins, then those of installed plugins."""
    names = dict.fromkeys(BUILTIN)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        names.setdefault(entry.name)
    return list(names)


def get_importer(name: str) -> Importer:
    """The importer of a format, imported on first use."""
    if name in _loaded:
        return _loaded[name]
    target = BUILTIN.get(name)
    if target is None:
        target = next(
            (entry.value for entry in entry_points(group=ENTRY_POINT_GROUP) if entry.name == name),
            None,
        )
    if target is None:
        known = format_names()
        hint = difflib.get_close_matches(name, known, n=1)
        suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
        raise UnknownFormat(f"unknown format '{name}'{suggestion}; formats: {', '.join(known)}")
    module_name, _, attribute = target.partition(":")
    importer = cast(Importer, getattr(importlib.import_module(module_name), attribute))
    _loaded[name] = importer
    return importer
