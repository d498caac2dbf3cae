"""The score of a benchmark over runs, oldest first: commit, date, accuracy with its interval
(cluster-robust by scenario with epochs), cost, and the scenarios that changed since the run
before (by each attempt's own scenario hash)."""

from __future__ import annotations

from benchyard.report.compare import outcome_figures, scenario_hashes, versions_between
from benchyard.report.model import RunFigures
from benchyard.store.outcomes import final_outcomes
from benchyard.store.records import RunRecord
from benchyard.store.store import Store


def benchmark_history(
    store: Store, benchmark: str, agent: str | None = None, limit: int | None = None
) -> list[RunFigures]:
    """The newest `limit` runs of `benchmark` (of one agent, if given), oldest first; each says
    which scenarios changed since the run before (`changed_scenarios`; None where its attempts
    were recorded before per-scenario hashes). Each run's figures come from its final outcomes
    (store/outcomes.py: a few columns per attempt), not from a report built from every attempt."""
    runs = [
        run
        for run in store.list_runs(benchmark=benchmark)
        if (agent is None or run.agent_name == agent) and run.kind == "benchmark"
    ]
    chosen = list(reversed(runs[:limit] if limit else runs))
    points = []
    before: tuple[RunRecord, dict[str, str | None]] | None = None
    for run in chosen:
        outcomes = final_outcomes(store, [run.id]).values()
        hashes = scenario_hashes(outcomes)
        figures = outcome_figures(run, outcomes)
        if before is not None:
            figures.changed_scenarios = _changed(before[0], run, before[1], hashes)
        points.append(figures)
        before = run, hashes
    return points


def _changed(
    first: RunRecord, run: RunRecord, before: dict[str, str | None], after: dict[str, str | None]
) -> list[str] | None:
    versions = versions_between(first, run, before, after)
    return versions.changed if versions.per_scenario else None
