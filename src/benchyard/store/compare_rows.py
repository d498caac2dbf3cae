"""What `benchyard compare` reads, as SQL text that any `Reader` (store/lite.py) runs: each run's
final attempts in (scenario, epoch) order, a few columns, read row by row so that a comparison
merges two runs of 100,000 attempts without holding either, and the counts of them that the
database adds up exactly (integers).

The merge compares scenario ids as Python does, by code point: SQLite orders text so (its BINARY
collation of UTF-8), PostgreSQL with `COLLATE "C"` (lite.py's code_point_order)."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any, cast

from benchyard.store.lite import Reader, code_point_order, in_list

# scenario_id, epoch, category, verdict, turns, cost_usd, duration_sec
FinalRow = tuple[str, int, str, str, int, float | None, float]


def final_rows(reader: Reader, run_id: str) -> Iterator[FinalRow]:
    """The run's final attempts ordered by scenario (code point order) and epoch, one at a time;
    a (scenario, epoch) with two final tries comes twice."""
    sql = (
        "SELECT scenario_id, epoch, category, verdict, turns, cost_usd, duration_sec"
        " FROM attempts WHERE run_id = :run AND superseded = :superseded"
        f" ORDER BY {code_point_order('scenario_id', reader)}, epoch"
    )
    return cast(Iterator[FinalRow], reader.stream(sql, {"run": run_id, "superseded": False}))


def verdict_tallies(reader: Reader, run_id: str) -> list[tuple[str, str, int, int]]:
    """The run's final attempts by category and verdict: (category, verdict, count, turns)."""
    sql = (
        "SELECT category, verdict, count(*), sum(turns) FROM attempts"
        " WHERE run_id = :run AND superseded = :superseded GROUP BY category, verdict"
    )
    rows = reader.rows(sql, {"run": run_id, "superseded": False})
    return [(str(c), str(v), int(n), int(turns or 0)) for c, v, n, turns in rows]


def epoch_count(reader: Reader, run_id: str) -> int:
    """How many epochs the run's final attempts have."""
    sql = (
        "SELECT count(DISTINCT epoch) FROM attempts"
        " WHERE run_id = :run AND superseded = :superseded"
    )
    return int(reader.rows(sql, {"run": run_id, "superseded": False})[0][0])


def counted_by_scenario(
    reader: Reader, run_id: str, counted: Collection[str]
) -> list[tuple[int, int]]:
    """Each scenario's final attempts with a `counted` verdict: (passed, counted), the scenarios
    in code point order; those with none are left out."""
    params: dict[str, Any] = {"run": run_id, "superseded": False, "passed": "passed"}
    sql = (
        "SELECT sum(CASE WHEN verdict = :passed THEN 1 ELSE 0 END), count(*) FROM attempts"
        " WHERE run_id = :run AND superseded = :superseded"
        f" AND verdict IN ({in_list('counted', sorted(counted), params)})"
        f" GROUP BY scenario_id ORDER BY {code_point_order('scenario_id', reader)}"
    )
    return [(int(passed), int(count)) for passed, count in reader.rows(sql, params)]
