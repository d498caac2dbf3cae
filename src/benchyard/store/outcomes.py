"""Final outcomes of runs, as a comparison reads them: only the columns it needs, no output,
trajectory, patch or check results; and what a run's report lists beside its aggregates (its
failures, its scenarios' tallies), as plain rows."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Select, case, func, select

from benchyard.store.browse import COUNTED
from benchyard.store.schema import attempts
from benchyard.store.store import Store

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


def final_outcomes(store: Store, run_ids: Sequence[str]) -> dict[Key, Outcome]:
    """The final outcome of each (scenario, epoch) over runs given oldest first (a run and the
    runs it re-ran): a later run's replaces an earlier one's. One query per run."""
    found: dict[Key, Outcome] = {}
    with store.engine.connect() as connection:
        for run_id in run_ids:  # row by row: never the run's rows and its outcomes both at once
            rows = connection.execute(_query(run_id))
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


def _query(
    run_id: str,
) -> Select[tuple[str, int, str, str, int, float | None, float, str | None]]:
    a = attempts.c
    return (
        select(
            a.scenario_id,
            a.epoch,
            a.category,
            a.verdict,
            a.turns,
            a.cost_usd,
            a.duration_sec,
            a.scenario_hash,
        )
        .where(a.run_id == run_id, a.superseded.is_(False))
        .order_by(a.scenario_id, a.epoch)
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


def final_failures(store: Store, run_id: str, limit: int | None = None) -> Iterator[FailureRow]:
    """The final attempts of a run that did not pass (the first `limit` of them, when given),
    ordered by scenario and epoch."""
    a = attempts.c
    query = (
        select(a.scenario_id, a.category, a.epoch, a.verdict, a.failure_kind, a.cause, a.id)
        .where(a.run_id == run_id, a.superseded.is_(False), a.verdict != "passed")
        .order_by(a.scenario_id, a.epoch, a.try_number)
        .limit(limit)
    )
    with store.engine.connect() as connection:
        for row in connection.execute(query):
            yield FailureRow(*row, run_id)


class ScenarioTally(NamedTuple):
    """A scenario's final attempts in a run: all of them, the counted ones, the passed ones."""

    attempts: int
    counted: int
    passed: int


def scenario_tallies(store: Store, run_id: str) -> dict[str, ScenarioTally]:
    """Each scenario's final attempts in a run, counted by the database, by scenario id."""
    a = attempts.c
    counted = a.verdict.in_(COUNTED)
    query = (
        select(
            a.scenario_id,
            func.count(),
            func.sum(case((counted, 1), else_=0)),
            func.sum(case((a.verdict == "passed", 1), else_=0)),
        )
        .where(a.run_id == run_id, a.superseded.is_(False))
        .group_by(a.scenario_id)
        .order_by(a.scenario_id)
    )
    with store.engine.connect() as connection:
        return {
            scenario: ScenarioTally(int(count), int(counted_n or 0), int(passed or 0))
            for scenario, count, counted_n, passed in connection.execute(query)
        }


def has_twice_final(store: Store, run_id: str) -> bool:
    """Whether one (scenario, epoch) of the run has two final tries (neither superseded), which
    the database's aggregates would both count where a report keeps the later one."""
    a = attempts.c
    twice = (
        select(a.scenario_id)
        .where(a.run_id == run_id, a.superseded.is_(False))
        .group_by(a.scenario_id, a.epoch)
        .having(func.count() > 1)
        .limit(1)
    )
    with store.engine.connect() as connection:
        return connection.execute(twice).first() is not None
