"""The importer contract: a source in a published format in, an ordinary benchmark out.

An importer reads one source (a file, or a directory of tasks) and returns an `Imported`: the
benchmark's identity and defaults, its scenarios as plain data (exactly what a scenario file would
hold), and the files those scenarios name (hidden tests, reference patches). `benchyard import`
writes that out as a benchmark directory; a `benchmark.yaml` with `format:` and `source:` builds
it in memory on every load (spec/loader.py hands such a manifest to importers/direct.py).

Every problem in a source is a `SourceProblem` naming the file, the line and the field; an
importer collects them all and raises `SourceInvalid` once, as the loader does for benchmarks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict

from benchyard.spec.problems import BenchmarkInvalid, Problem

if TYPE_CHECKING:
    from benchyard.store.records import AttemptRecord


class ImportOptions(BaseModel):
    """Base of an importer's options (`--option key=value`, or `options:` in benchmark.yaml);
    unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Origin:
    """Where a scenario came from in the source: the file and the line (1-based)."""

    file: Path
    line: int


@dataclass
class ImportedScenario:
    """One scenario as plain data (what a scenario file holds), where it came from, and the
    scenario file it is written to (`scenarios/<group>.yaml`)."""

    data: dict[str, Any]
    origin: Origin
    group: str


@dataclass
class Imported:
    """A whole benchmark read from a source."""

    name: str
    version: str
    description: str
    scenarios: list[ImportedScenario]
    defaults: dict[str, Any] = field(default_factory=dict)
    sandbox: dict[str, Any] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    """Files the scenarios name, by path relative to the scenario files' directory."""
    links: dict[str, Path] = field(default_factory=dict)
    """Files or directories of the source the scenarios name, by the same relative path: copied by
    `benchyard import`, read where they lie when the benchmark is loaded from its source."""


def message_stimulus(message: str, system: str | None) -> dict[str, Any]:
    """A scenario's stimulus: the user's message, with the system prompt unless it is empty."""
    return {"message": message, "system": system} if system else {"message": message}


class SourceProblem(Problem):
    """A problem in a source file: file, line and field, like a benchmark problem."""


class SourceInvalid(BenchmarkInvalid):
    """The source has problems; every one is listed."""


class ProblemList:
    """Problems found while reading one source."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, file: Path, line: int | None, field_name: str, message: str) -> None:
        self.problems.append(SourceProblem(str(file), line, field_name, message))

    def raise_if_any(self) -> None:
        if self.problems:
            raise SourceInvalid(self.problems)


class Importer(Protocol):
    """A format: its name, the version of its semantics, and how to read a source of it."""

    name: str
    format_version: str
    """The version of the format's grading semantics this importer reproduces; it changes when a
    rule changes, and is recorded with the benchmark and every run."""
    summary: str
    source_kind: str  # "file" or "directory"
    options: type[ImportOptions]

    def read(self, source: Path, options: Any) -> Imported: ...

    def metrics(
        self, attempts: Sequence[AttemptRecord], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The format's own figures for a report (prompt-level accuracy, the answer rule, ...)."""
        ...


class BaseImporter:
    """Defaults for an importer: no options, no metrics of its own."""

    name: ClassVar[str] = ""
    format_version: ClassVar[str] = "1"
    summary: ClassVar[str] = ""
    source_kind: ClassVar[str] = "file"
    options: ClassVar[type[ImportOptions]] = ImportOptions

    def read(self, source: Path, options: Any) -> Imported:
        raise NotImplementedError

    def metrics(
        self, attempts: Sequence[AttemptRecord], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        return {}
