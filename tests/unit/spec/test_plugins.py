"""spec/ validates check types and environments through the Plugins it is given (the layers
above it register theirs in benchyard.benchmarks.loader), importing none of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from benchyard.spec.loader import Benchmark, ProblemCollector, read_benchmark
from benchyard.spec.models import BenchmarkManifest
from benchyard.spec.problems import BenchmarkInvalid
from benchyard.spec.source_files import Located
from tests.support import write_benchmark


class ShoutParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    word: str

    def benchmark_files(self) -> dict[str, str]:
        return {}

    def benchmark_file_problem(self, name: str, path: Path) -> str | None:
        return None


class OnlyShout:
    """Plugins that know one check type, `shout`, and no environment or format."""

    def check_params(self, kind: str) -> type[BaseModel] | None:
        return ShoutParams if kind == "shout" else None

    def check_names(self) -> list[str]:
        return ["shout"]

    def environment(self, kind: str) -> None:
        return None

    def unknown_environment(self, kind: str) -> str:
        return f"no environment '{kind}' here"

    def load_from_source(
        self,
        root: Path,
        manifest: BenchmarkManifest,
        manifest_source: Located,
        collector: ProblemCollector,
    ) -> Benchmark:
        raise AssertionError("no format is known")


def shout(sid: str, **check: Any) -> dict[str, Any]:
    return {"id": sid, "stimulus": "x", "checks": [{"type": "shout", **check}]}


def test_a_check_type_the_plugins_know_is_valid(tmp_path: Path) -> None:
    plugins = OnlyShout()
    benchmark = read_benchmark(write_benchmark(tmp_path, [shout("a", word="hi")]), plugins)
    assert [each.id for each in benchmark.scenarios] == ["a"]
    assert benchmark.plugins is plugins


def test_checks_and_environments_are_judged_by_the_plugins_given(tmp_path: Path) -> None:
    unknown = {"id": "b", "stimulus": "x", "checks": [{"type": "equals", "value": "x"}]}
    simulated = {**shout("c", word="hi"), "environment": {"type": "sre"}}
    root = write_benchmark(tmp_path, [shout("a", wrd="hi"), unknown, simulated])
    with pytest.raises(BenchmarkInvalid) as raised:
        read_benchmark(root, OnlyShout())
    assert [f"{each.field}: {each.message}" for each in raised.value.problems] == [
        "checks[0].word: required field is missing",
        "checks[0].wrd: unknown field (did you mean 'word'?)",
        "checks[0].type: unknown check type 'equals' (known: shout)",
        "environment.type: no environment 'sre' here",
    ]
