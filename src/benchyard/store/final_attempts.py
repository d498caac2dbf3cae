"""A run's final attempts (neither superseded) as SQL text any `Reader` (store/lite.py) runs: the
condition and parameters the run's figures, outcomes and report rows select them by, and whether
one attempt has two of them. Kept apart from store/figures.py so that `run -q`, which only asks
the latter for its exit status, imports none of the figures (issue 27, item 3)."""

from __future__ import annotations

from typing import Any

from benchyard.store.lite import HoldsReader, Reader, reader_of

# A run's final attempts (`a`, the attempts table), with the parameters `final_params` binds.
FINAL = "a.run_id = :run AND a.superseded = :superseded"


def final_params(run_id: str) -> dict[str, Any]:
    return {"run": run_id, "superseded": False}


def has_twice_final(source: Reader | HoldsReader, run_id: str) -> bool:
    """Whether one (scenario, epoch) of the run has two final tries (neither superseded), which
    the database's aggregates would both count where a report keeps the later one."""
    sql = (
        f"SELECT a.scenario_id FROM attempts a WHERE {FINAL}"
        " GROUP BY a.scenario_id, a.epoch HAVING count(*) > 1 LIMIT 1"
    )
    return bool(reader_of(source).rows(sql, final_params(run_id)))
