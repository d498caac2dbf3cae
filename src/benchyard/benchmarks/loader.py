"""`load_benchmark`: a benchmark read by spec/ and validated against benchyard's registries of
check types (checks/), simulated environments (agents/) and published formats (importers/)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from benchyard.agents.environments import ToolEnvironment, get_environment, unknown_environment
from benchyard.checks.registry import check_names, get_check_type
from benchyard.spec.loader import Benchmark, ProblemCollector, read_benchmark
from benchyard.spec.models import BenchmarkManifest
from benchyard.spec.source_files import Located


class RegisteredPlugins:
    """spec/'s Plugins: the check types, environments and formats registered with benchyard."""

    def check_params(self, kind: str) -> type[BaseModel] | None:
        found = get_check_type(kind)
        return found.params if found is not None else None

    def check_names(self) -> list[str]:
        return check_names()

    def environment(self, kind: str) -> ToolEnvironment | None:
        return get_environment(kind)

    def unknown_environment(self, kind: str) -> str:
        return unknown_environment(kind)

    def load_from_source(
        self,
        root: Path,
        manifest: BenchmarkManifest,
        manifest_source: Located,
        collector: ProblemCollector,
    ) -> Benchmark:
        from benchyard.importers.direct import load_from_source  # a benchmark with a `source:`

        return load_from_source(root, manifest, manifest_source, collector, self)


PLUGINS = RegisteredPlugins()


def load_benchmark(reference: str | Path) -> Benchmark:
    """Load and validate a benchmark; raise BenchmarkInvalid listing every problem found."""
    return read_benchmark(reference, PLUGINS)
