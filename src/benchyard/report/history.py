"""The score of a benchmark over runs, oldest first: commit, date, accuracy with its interval
(cluster-robust by scenario with epochs), cost, and the scenarios that changed since the run
before (by each attempt's own scenario hash). Read through a `Reader` (store/lite.py): a SQLite
store's through sqlite3, or a Store's engine."""

from __future__ import annotations

from benchyard.report.compare import (
    FigureSums,
    cluster_interval,
    outcome_figures,
    run_figures,
    scenario_hashes,
    version_differences,
    versions_between,
)
from benchyard.report.model import RunFigures
from benchyard.report.stats import wilson_interval
from benchyard.runner.failures import COUNTED_VERDICTS
from benchyard.store.final_attempts import has_twice_final
from benchyard.store.lite import HoldsReader, Reader, reader_of
from benchyard.store.outcomes import final_outcomes, scenario_tallies
from benchyard.store.records import RunRecord
from benchyard.store.report_rows import verdict_groups
from benchyard.store.run_list import list_runs


def benchmark_history(
    source: Reader | HoldsReader, benchmark: str, agent: str | None = None, limit: int | None = None
) -> list[RunFigures]:
    """The newest `limit` runs of `benchmark` (of one agent, if given), oldest first; each says
    which scenarios changed since the run before (`changed_scenarios`; None where its attempts
    were recorded before per-scenario hashes). Each run's figures come from its final outcomes
    (store/outcomes.py: a few columns per attempt), not from a report built from every attempt."""
    reader = reader_of(source)
    runs = [
        run
        for run in list_runs(reader, benchmark=benchmark)
        if (agent is None or run.agent_name == agent) and run.kind == "benchmark"
    ]
    chosen = list(reversed(runs[:limit] if limit else runs))
    points = []
    before: RunRecord | None = None
    for run in chosen:
        figures = _figures(reader, run)
        if before is not None:
            figures.changed_scenarios = _changed(reader, before, run)
        points.append(figures)
        before = run
    return points


def _figures(reader: Reader, run: RunRecord) -> RunFigures:
    """The run's figures (not merged with the runs it re-ran) as the database counts them; from
    its final outcomes where an attempt has two final tries, of which only the later counts."""
    if has_twice_final(reader, run.id):
        return outcome_figures(run, final_outcomes(reader, [run.id]).values())
    groups, p50_sec = verdict_groups(reader, run.id)
    counted = [g for g in groups if g.verdict in COUNTED_VERDICTS]
    passed = sum(g.attempts for g in counted if g.verdict == "passed")
    counted_n = sum(g.attempts for g in counted)
    costs = [g.cost_usd for g in groups if g.cost_usd is not None]
    interval = (wilson_interval(passed, counted_n), "wilson")  # one attempt per scenario
    if max((g.max_epoch for g in groups), default=0) > 1:
        tallies = scenario_tallies(reader, run.id).values()
        interval = cluster_interval([(t.passed, t.counted) for t in tallies if t.counted])
    sums = FigureSums(
        passed=passed,
        counted=counted_n,
        errors=sum(g.attempts for g in groups if g.verdict == "error"),
        attempts=sum(g.attempts for g in groups),
        counted_turns=sum(g.turns for g in counted),
        cost_usd=sum(costs) if costs else None,
        p50_sec=p50_sec,
        total_attempt_sec=sum(g.duration_sec for g in groups),
        interval=interval,
    )
    return run_figures(run, [run.id], sums)


def _changed(reader: Reader, first: RunRecord, run: RunRecord) -> list[str] | None:
    """The scenarios whose own hash changed since the run before: none between runs of the same
    benchmark content, whose scenario hashes are not read."""
    if not version_differences(first, run):
        return []
    before, after = (scenario_hashes(final_outcomes(reader, [r.id]).values()) for r in (first, run))
    versions = versions_between(first, run, before, after)
    return versions.changed if versions.per_scenario else None
