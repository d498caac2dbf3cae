"""Importers: published benchmark formats (HumanEval, MBPP, GSM8K, IFEval, BFCL, SWE-bench,
Harbor and Terminal-Bench tasks) read into ordinary benchyard benchmarks, graded as their official
evaluators grade them. See docs/importers.md; a new format is one module and one entry in
`registry.BUILTIN` (or the `benchyard.importers` entry-point group)."""

from benchyard.importers.base import (
    BaseImporter,
    Imported,
    ImportedScenario,
    Importer,
    ImportOptions,
    Origin,
    ProblemList,
    SourceInvalid,
)
from benchyard.importers.build import ImportResult, read_source, write_benchmark
from benchyard.importers.registry import UnknownFormat, format_names, get_importer

__all__ = [
    "BaseImporter",
    "ImportOptions",
    "ImportResult",
    "Imported",
    "ImportedScenario",
    "Importer",
    "Origin",
    "ProblemList",
    "SourceInvalid",
    "UnknownFormat",
    "format_names",
    "get_importer",
    "read_source",
    "write_benchmark",
]
