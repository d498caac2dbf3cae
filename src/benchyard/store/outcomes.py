"""Final outcomes of runs, as a comparison reads them: only the columns it needs, no output,
trajectory, patch or check results; and what a run's report lists beside its aggregates (its
failures, its scenarios' tallies), as plain rows. Written once as SQL text that any `Reader`
(store/lite.py) runs; each function takes a Reader or a Store (its engine's Reader)."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from benchyard.store.figures import IS_COUNTED
from benchyard.store.final_attempts import FINAL, final_params
from benchyard.store.lite import HoldsReader, Reader, reader_of

Key = tuple[str, int]  # (scenario, epoch)


class Outcome(NamedTuple):
    """The final attempt of one (scenario, epoch), as far as a comparison needs it."""

    scenario_id: str
    epoch: int
    category: str
    verdict: str
    turns: int
    cost_usd: float | None
    duration_sec: float
    scenario_hash: str | None  # None in attempts recorded before migration 0015


_OUTCOMES = (
    "SELECT a.scenario_id, a.epoch, a.category, a.verdict, a.turns, a.cost_usd, a.duration_sec,"
    f" a.scenario_hash FROM attempts a WHERE {FINAL} ORDER BY a.scenario_id, a.epoch"
)


def final_outcomes(source: Reader | HoldsReader, run_ids: Sequence[str]) -> dict[Key, Outcome]:
    """The final outcome of each (scenario, epoch) over runs given oldest first (a run and the
    runs it re-ran): a later run's replaces an earlier one's. One query per run."""
    reader = reader_of(source)
    found: dict[Key, Outcome] = {}
    for run_id in run_ids:  # row by row: never the run's rows and its outcomes both at once
        rows = reader.stream(_OUTCOMES, final_params(run_id))
        found.update({(o.scenario_id, o.epoch): o for o in map(_outcome, rows)})
    return found


def _outcome(row: Sequence[Any]) -> Outcome:
    """An outcome whose strings are shared with every other outcome's that holds the same: the
    category and verdict repeated on every row, the scenario in every run compared (two runs of
    100,000 attempts kept 400,000 copies)."""
    intern = sys.intern
    return Outcome(
        intern(row[0]), row[1], intern(row[2]), intern(row[3]), row[4], row[5], row[6], row[7]
    )


class FailureRow(NamedTuple):
    """A final attempt that did not pass, as a report lists it."""

    scenario_id: str
    category: str
    epoch: int
    verdict: str
    failure_kind: str | None
    cause: str | None
    attempt_id: str
    run_id: str


def final_failures(
    source: Reader | HoldsReader, run_id: str, limit: int | None = None
) -> Iterator[FailureRow]:
    """The final attempts of a run that did not pass (the first `limit` of them, when given),
    ordered by scenario and epoch."""
    params: dict[str, Any] = final_params(run_id)
    sql = (
        "SELECT a.scenario_id, a.category, a.epoch, a.verdict, a.failure_kind, a.cause, a.id"
        f" FROM attempts a WHERE {FINAL} AND a.verdict != 'passed'"
        " ORDER BY a.scenario_id, a.epoch, a.try_number"
    )
    if limit is not None:
        sql += " LIMIT :limit"
        params["limit"] = limit
    for scenario, category, epoch, verdict, kind, cause, attempt in reader_of(source).stream(
        sql, params
    ):
        yield FailureRow(scenario, category, epoch, verdict, kind, cause, attempt, run_id)


class ScenarioTally(NamedTuple):
    """A scenario's final attempts in a run: all of them, the counted ones, the passed ones."""

    attempts: int
    counted: int
    passed: int


def scenario_tallies(source: Reader | HoldsReader, run_id: str) -> dict[str, ScenarioTally]:
    """Each scenario's final attempts in a run, counted by the database, by scenario id."""
    sql = (
        f"SELECT a.scenario_id, count(*), sum(CASE WHEN {IS_COUNTED} THEN 1 ELSE 0 END),"
        " sum(CASE WHEN a.verdict = 'passed' THEN 1 ELSE 0 END)"
        f" FROM attempts a WHERE {FINAL} GROUP BY a.scenario_id ORDER BY a.scenario_id"
    )
    return {
        scenario: ScenarioTally(int(count), int(counted_n or 0), int(passed or 0))
        for scenario, count, counted_n, passed in reader_of(source).rows(sql, final_params(run_id))
    }
