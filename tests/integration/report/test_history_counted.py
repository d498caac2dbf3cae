"""`history` takes a run's figures from what the database counts (report/history.py), and they
are the figures its final outcomes give (report/compare.py's outcome_figures, which `compare`
still folds): on three epochs of attempts that vary every way the figures count, and on a run
with two final tries of one attempt, where only the later counts."""

from __future__ import annotations

from typing import Any

import pytest

from benchyard.report.compare import outcome_figures
from benchyard.report.history import benchmark_history
from benchyard.report.model import RunFigures
from benchyard.store.outcomes import final_outcomes
from benchyard.store.store import Store
from tests.integration.report.test_aggregated import RUN, _reports
from tests.support import attempt_record, run_record

SUMS = ("cost_usd", "total_attempt_sec")  # added up in another order: the last bits


def _folded(store: Store, run_id: str) -> RunFigures:
    return outcome_figures(store.get_run(run_id), final_outcomes(store, [run_id]).values())


def _same(got: RunFigures, want: RunFigures) -> None:
    counted: dict[str, Any] = got.model_dump()
    folded: dict[str, Any] = want.model_dump()
    for name in SUMS:
        assert counted.pop(name) == pytest.approx(folded.pop(name)), name
    assert counted == folded


def test_a_runs_history_figures_are_its_outcomes(store: Store) -> None:
    _reports(store)

    (point,) = benchmark_history(store, "b")

    _same(point, _folded(store, RUN))
    assert point.accuracy_ci95_method == "cluster-robust by scenario"
    assert point.cost_usd is not None and point.errors > 0


def test_a_run_with_two_final_tries_of_an_attempt_counts_the_later(store: Store) -> None:
    run_id = "d" * 16
    store.create_run(run_record(run_id, planned_attempts=2))
    store.record_attempts(
        [
            attempt_record(run_id, "1" * 32, "s1", verdict="failed", score=0.0),
            attempt_record(run_id, "2" * 32, "s1", verdict="passed", try_number=2),
            attempt_record(run_id, "3" * 32, "s2", verdict="passed"),
        ]
    )

    (point,) = benchmark_history(store, "b")

    _same(point, _folded(store, run_id))
    assert (point.passed, point.attempt_count) == (2, 2)
