"""A run's figures as SQL aggregates, written once as SQL text that any `Reader` (store/lite.py)
runs: `benchyard report` reads a SQLite store through `sqlite3` with them, the web UI's run page
(store/browse.py) through SQLAlchemy. The final attempts grouped by category, verdict, negative
and failure kind (the `long` and `hit_max_turns` flags counted in the same pass), the percentiles
of their durations from one sorted pass, the median of their extra turns, their check results
by type.

The review flags' thresholds and marker are report/flags.py's and checks/patch_scan.py's, kept
here as values (the store does not import the packages that read it; a test holds them equal)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from benchyard.store.final_attempts import FINAL, final_params
from benchyard.store.lite import Reader, in_list

LONG_FACTOR = 2.0
LONG_FLOOR = 1.0
NEAR_MARGIN = 0.05
SUSPICIOUS_PATCH = "suspicious patch: "
FLAG_KINDS = ("long", "flaky", "near_threshold", "hit_max_turns", "suspicious_patch")
COUNTED = ("passed", "failed", "timeout")
PERCENTILES = (50, 90, 99)

IS_COUNTED = "a.verdict IN ('passed', 'failed', 'timeout')"  # COUNTED, ours, never input


@dataclass(frozen=True)
class VerdictGroup:
    """Final attempts of a run that share category, verdict, negative and failure kind."""

    category: str
    verdict: str
    negative: bool
    failure_kind: str | None
    attempts: int
    turns: int
    hit_max_turns: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None  # None when no attempt of the group had a cost
    judge_tokens_in: int
    judge_tokens_out: int
    judge_cost_usd: float | None
    duration_sec: float
    max_duration_sec: float
    max_epoch: int
    long: int  # counted attempts whose extra turns are over the `long` limit


@dataclass(frozen=True)
class CheckTally:
    check_type: str
    passed: int
    total: int


@dataclass(frozen=True)
class RunFigureTallies:
    """Everything a run's summary is computed from, as the database counted it."""

    groups: list[VerdictGroup]
    scenarios: int
    durations: dict[int, float | None]  # percentile -> seconds
    retried: int
    checks: list[CheckTally]
    median_turns: float  # median extra turns (beyond the scripted user turns) of counted ones
    flags: dict[str, int] = field(default_factory=dict)


def figure_tallies(reader: Reader, run_id: str) -> RunFigureTallies:
    """A run's final attempts counted every way its summary needs (the review flags other than
    `long` and `hit_max_turns` left uncounted: the web UI counts them, store/browse.py)."""
    median = median_counted_turns(reader, run_id)
    groups = verdict_groups(reader, run_id, median)
    count = sum(group.attempts for group in groups)
    several = any(group.max_epoch > 1 for group in groups)  # else one attempt per scenario
    return RunFigureTallies(
        groups=groups,
        scenarios=_count(reader, "count(DISTINCT a.scenario_id)", FINAL, final_params(run_id))
        if several
        else count,
        durations=percentiles(reader, run_id, count),
        retried=_count(
            reader,
            "count(*)",
            "a.run_id = :run AND a.superseded = :superseded",
            {"run": run_id, "superseded": True},
        ),
        checks=check_tallies(reader, run_id),
        median_turns=median,
    )


def _count(reader: Reader, aggregate: str, where: str, params: dict[str, Any]) -> int:
    rows = reader.rows(f"SELECT {aggregate} FROM attempts a WHERE {where}", params)
    return int(rows[0][0] or 0)


def long_limit(median_turns: float) -> float:
    """report/flags.py's long_limit: the extra turns over which a counted attempt is `long`."""
    return LONG_FACTOR * max(median_turns, LONG_FLOOR)


# A counted final attempt whose extra turns are over :long_limit (report/flags.py's `long`).
IS_LONG = f"{IS_COUNTED} AND a.turns - a.user_turns > :long_limit"


def verdict_groups(reader: Reader, run_id: str, median_turns: float) -> list[VerdictGroup]:
    sql = (
        "SELECT a.category, a.verdict, a.negative, a.failure_kind, count(*), sum(a.turns),"
        " sum(CASE WHEN a.hit_max_turns THEN 1 ELSE 0 END), sum(a.tokens_in), sum(a.tokens_out),"
        " sum(a.cost_usd), sum(a.judge_tokens_in), sum(a.judge_tokens_out),"
        " sum(a.judge_cost_usd), sum(a.duration_sec), max(a.duration_sec), max(a.epoch),"
        f" sum(CASE WHEN {IS_LONG} THEN 1 ELSE 0 END)"
        f" FROM attempts a WHERE {FINAL}"
        " GROUP BY a.category, a.verdict, a.negative, a.failure_kind"
        " ORDER BY a.category, a.verdict"
    )
    params = {**final_params(run_id), "long_limit": long_limit(median_turns)}
    return [_verdict_group(row) for row in reader.rows(sql, params)]


def _verdict_group(row: Any) -> VerdictGroup:
    return VerdictGroup(
        category=row[0],
        verdict=row[1],
        negative=bool(row[2]),
        failure_kind=row[3],
        attempts=int(row[4]),
        turns=int(row[5] or 0),
        hit_max_turns=int(row[6] or 0),
        tokens_in=int(row[7] or 0),
        tokens_out=int(row[8] or 0),
        cost_usd=None if row[9] is None else float(row[9]),
        judge_tokens_in=int(row[10] or 0),
        judge_tokens_out=int(row[11] or 0),
        judge_cost_usd=None if row[12] is None else float(row[12]),
        duration_sec=float(row[13] or 0.0),
        max_duration_sec=float(row[14] or 0.0),
        max_epoch=int(row[15] or 0),
        long=int(row[16] or 0),
    )


def percentiles(reader: Reader, run_id: str, count: int) -> dict[int, float | None]:
    """The PERCENTILES of the final attempts' durations, interpolated between closest ranks as
    report/stats.py's `percentile` does, from the rows at those ranks of one sorted pass."""
    if count == 0:
        return dict.fromkeys(PERCENTILES)
    positions = {q: (count - 1) * q / 100 for q in PERCENTILES}
    ranks = {int(p) for p in positions.values()} | {
        min(int(p) + 1, count - 1) for p in positions.values()
    }
    params = final_params(run_id)
    sql = (
        "SELECT ranked.rank, ranked.duration_sec FROM (SELECT a.duration_sec,"
        " row_number() OVER (ORDER BY a.duration_sec) - 1 AS rank"
        f" FROM attempts a WHERE {FINAL}) AS ranked"
        f" WHERE ranked.rank IN ({in_list('rank', sorted(ranks), params)})"
    )
    at = {int(rank): float(value) for rank, value in reader.rows(sql, params)}
    result: dict[int, float | None] = {}
    for q, position in positions.items():
        low = int(position)
        high = min(low + 1, count - 1)
        result[q] = at[low] + (at[high] - at[low]) * (position - low)
    return result


def median_counted_turns(reader: Reader, run_id: str) -> float:
    """report/flags.py's median_extra_turns: statistics.median of the counted attempts' extra
    turns (beyond the scripted user turns, at least 0; 0 without counted attempts)."""
    counted = f"{FINAL} AND {IS_COUNTED}"
    total = _count(reader, "count(*)", counted, final_params(run_id))
    if total == 0:
        return 0
    sql = (
        "SELECT CASE WHEN a.turns > a.user_turns THEN a.turns - a.user_turns ELSE 0 END AS extra"
        f" FROM attempts a WHERE {counted} ORDER BY extra LIMIT :limit OFFSET :offset"
    )
    params = {**final_params(run_id), "limit": 2 - total % 2, "offset": (total - 1) // 2}
    return statistics.median(int(row[0]) for row in reader.rows(sql, params))


def check_tallies(reader: Reader, run_id: str) -> list[CheckTally]:
    sql = (
        "SELECT c.check_type, sum(CASE WHEN c.passed THEN 1 ELSE 0 END), count(*)"
        " FROM check_results c JOIN attempts a ON a.id = c.attempt_id"
        f" WHERE {FINAL} GROUP BY c.check_type ORDER BY c.check_type"
    )
    return [
        CheckTally(check_type, int(passed or 0), int(total))
        for check_type, passed, total in reader.rows(sql, final_params(run_id))
    ]
