"""Rebuilding what a run recorded: its benchmark (refused when its files changed), its settings and
its agent. Workers, `rerun` and `rescore` start from a run record and nothing else."""

from __future__ import annotations

from collections.abc import Mapping

from benchyard.agents.base import Agent
from benchyard.agents.registry import build_agent
from benchyard.benchmarks.loader import load_benchmark
from benchyard.errors import BenchyardError
from benchyard.runner.execute import RunSettings
from benchyard.spec.loader import Benchmark
from benchyard.store.records import RunRecord


class RunRefused(BenchyardError):
    """A run that cannot start as asked (nothing to run, a changed benchmark, ...)."""


def recorded_benchmark(run: RunRecord, advice: str = "start a new run instead") -> Benchmark:
    """The benchmark at the run's recorded path, refused unless its content hash is unchanged."""
    benchmark = load_benchmark(run.benchmark_path)
    if benchmark.content_hash != run.benchmark_hash:
        raise RunRefused(
            f"the benchmark at {run.benchmark_path} changed since run {run.id[:8]} "
            f"({run.benchmark_hash[:19]} -> {benchmark.content_hash[:19]}); {advice}"
        )
    return benchmark


def recorded_settings(run: RunRecord, overrides: Mapping[str, object] | None = None) -> RunSettings:
    known = set(RunSettings.__dataclass_fields__)
    recorded = {key: value for key, value in run.settings.items() if key in known}
    recorded["filters"] = tuple(recorded.get("filters", ()))
    return RunSettings(**{**recorded, **(overrides or {})})


def recorded_agent(run: RunRecord) -> Agent:
    return build_agent(run.agent_name, run.agent_config)
