"""What the loader asks of the layers above spec/: check types, environments, published formats.

spec/ reads a benchmark and validates its shape. The check types (checks/), the simulated
environments (agents/) and the formats read from a source (importers/) live above it: the loader
takes them as a `Plugins` object, which `benchyard.benchmarks.loader` builds from their
registries, so that spec/ imports none of them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

if TYPE_CHECKING:
    from benchyard.spec.loader import Benchmark, ProblemCollector
    from benchyard.spec.models import BenchmarkManifest
    from benchyard.spec.source_files import Located


class CheckParamsModel(Protocol):
    """What the loader reads of a check's valid parameters (checks/base.py's CheckParams)."""

    def benchmark_files(self) -> dict[str, str]:
        """Files of the benchmark the check reads, by parameter name, relative to the scenario."""
        ...

    def benchmark_file_problem(self, name: str, path: Path) -> str | None:
        """What is wrong with the file that parameter `name` names, found at `path`."""
        ...


class Environment(Protocol):
    """What the loader reads of a simulated environment type (agents/environments.py)."""

    @property
    def params(self) -> type[BaseModel]: ...

    @property
    def tool_names(self) -> tuple[str, ...]: ...

    def check(self, params: Any) -> str | None:
        """Why these (valid) parameters cannot be simulated, or None."""
        ...


class Plugins(Protocol):
    """The registries a benchmark is validated against."""

    def check_params(self, kind: str) -> type[BaseModel] | None:
        """The parameter model of check type `kind` (a CheckParamsModel), or None when unknown."""
        ...

    def check_names(self) -> list[str]:
        """Every check type's name."""
        ...

    def environment(self, kind: str) -> Environment | None:
        """The environment type `kind`, or None when unknown."""
        ...

    def unknown_environment(self, kind: str) -> str:
        """The problem of naming an unknown environment type `kind`."""
        ...

    def load_from_source(
        self,
        root: Path,
        manifest: BenchmarkManifest,
        manifest_source: Located,
        collector: ProblemCollector,
    ) -> Benchmark:
        """The benchmark of a manifest with `format:` and `source:`, read from its source."""
        ...
