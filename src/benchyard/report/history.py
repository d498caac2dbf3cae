"""The score of a benchmark over runs, oldest first: commit, date, accuracy with its interval, cost."""

from __future__ import annotations

from benchyard.report.build import build_report
from benchyard.report.compare import run_figures
from benchyard.report.model import RunFigures
from benchyard.store.store import Store


def benchmark_history(
    store: Store, benchmark: str, agent: str | None = None, limit: int | None = None
) -> list[RunFigures]:
    """The newest `limit` runs of `benchmark` (of one agent, if given), oldest first."""
    runs = [
        run
        for run in store.list_runs(benchmark=benchmark)
        if (agent is None or run.agent_name == agent) and run.kind == "benchmark"
    ]
    chosen = runs[:limit] if limit else runs
    return [run_figures(build_report(store, run)) for run in reversed(chosen)]
