"""What a streamed run report reads beside its figures (store/figures.py), written once as SQL
text that any `Reader` (store/lite.py) runs: the final attempts that raise a review flag, with
only the columns and the check results that report/flags.py decides them on, one row at a time
in code point order of scenario (Python's order of strings, in which the report sorts its flags);
and the verdict groups and median duration that `history` takes a run's figures from."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchyard.store.figures import (
    IS_LONG,
    NEAR_MARGIN,
    SUSPICIOUS_PATCH,
    VerdictGroup,
    long_limit,
    percentiles,
)
from benchyard.store.figures import verdict_groups as grouped
from benchyard.store.final_attempts import FINAL, final_params
from benchyard.store.lite import Reader, code_point_order


@dataclass(frozen=True)
class FlagCheck:
    """A check result that may raise a flag: near its own threshold, or noting a patch."""

    label: str
    score: float
    threshold: float | None
    reason: str


@dataclass(frozen=True)
class FlaggedAttempt:
    """A final attempt that raises a review flag, as report/flags.py reads it."""

    id: str
    scenario_id: str
    epoch: int
    verdict: str
    turns: int
    user_turns: int
    hit_max_turns: bool
    score: float
    threshold: float | None
    checks: list[FlagCheck] = field(default_factory=list)


def _near(table: str) -> str:
    """A partial score of `table` (an attempt or a check result) within :margin of its own
    threshold (report/flags.py's near_threshold)."""
    return (
        f"{table}.threshold IS NOT NULL AND {table}.score > 0 AND {table}.score < 1"
        f" AND abs({table}.score - {table}.threshold) <= :margin"
    )


# A check result that report/flags.py may flag: near its own threshold, or a reason noting a
# suspicious patch (LIKE, as SQLAlchemy's `contains` reads it on either database).
_MAY_FLAG = f"({_near('c')}) OR c.reason LIKE :suspicious"
# A final attempt that raises a flag other than `flaky`: the checks' flags by the join, not by a
# subquery per attempt and flag.
_RAISING = (
    f"({IS_LONG}) OR a.hit_max_turns"
    f" OR (a.verdict IN ('passed', 'failed') AND {_near('a')}) OR c.attempt_id IS NOT NULL"
)


def flagged_attempts(reader: Reader, run_id: str, median_turns: float) -> Iterator[FlaggedAttempt]:
    """The final attempts of a run that raise a flag other than `flaky`, ordered by scenario (in
    code point order) and epoch, each with its check results that may raise one (in order)."""
    sql = (
        "SELECT a.id, a.scenario_id, a.epoch, a.verdict, a.turns, a.user_turns, a.hit_max_turns,"
        " a.score, a.threshold, c.label, c.score, c.threshold, c.reason"
        f" FROM attempts a LEFT OUTER JOIN check_results c ON c.attempt_id = a.id AND ({_MAY_FLAG})"
        f" WHERE {FINAL} AND ({_RAISING})"
        f" ORDER BY {code_point_order('a.scenario_id', reader)}, a.epoch, c.position"
    )
    params = {
        **final_params(run_id),
        "long_limit": long_limit(median_turns),
        "margin": NEAR_MARGIN,
        "suspicious": f"%{SUSPICIOUS_PATCH}%",
    }
    held: FlaggedAttempt | None = None
    for row in reader.stream(sql, params):
        if held is None or held.id != row[0]:
            if held is not None:
                yield held
            held = _flagged(row)
        if row[9] is not None:
            held.checks.append(FlagCheck(*row[9:]))
    if held is not None:
        yield held


def _flagged(row: Sequence[Any]) -> FlaggedAttempt:
    """An attempt from its row (SQLite's booleans are integers)."""
    return FlaggedAttempt(row[0], row[1], row[2], row[3], row[4], row[5], bool(row[6]), *row[7:9])


def verdict_groups(reader: Reader, run_id: str) -> tuple[list[VerdictGroup], float | None]:
    """A run's final attempts grouped as store/figures.py's figures group them (their `long`
    counts, which need the run's median turns, left at nought), and their median duration."""
    groups = grouped(reader, run_id, median_turns=0)
    count = sum(group.attempts for group in groups)
    return groups, percentiles(reader, run_id, count)[50]
