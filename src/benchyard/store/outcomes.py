"""Final outcomes of runs, as a comparison reads them: only the columns it needs, no output,
trajectory, patch or check results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from sqlalchemy import Select, select

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
        for run_id in run_ids:
            rows = connection.execute(_query(run_id)).all()
            found.update({(o.scenario_id, o.epoch): o for o in map(Outcome._make, rows)})
    return found


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
