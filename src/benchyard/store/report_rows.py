"""What a streamed run report reads beside its aggregates: the figures' tallies without the web
UI's review-flag counts, and the final attempts that raise a review flag, with only the columns
and the check results that report/flags.py decides them on, one row at a time in code point
order of scenario (Python's order of strings, in which the report sorts its flags); and the
verdict groups and median duration that `history` takes a run's figures from."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select

from benchyard.store import browse
from benchyard.store.browse import (
    NEAR_MARGIN,
    SUSPICIOUS_PATCH,
    RunFigureTallies,
    VerdictGroup,
    flag_condition,
)
from benchyard.store.schema import attempts, check_results
from benchyard.store.store import Store


def figure_tallies(store: Store, run_id: str) -> RunFigureTallies:
    """store/browse.py's figure_tallies less its review-flag counts (the web UI's, 0.2 s of a
    100,000-attempt run's report), from the same queries."""
    a = attempts.c
    with store.engine.connect() as connection:
        median = browse._median_counted_turns(connection, run_id)
        groups = browse._verdict_groups(connection, run_id, median)
        count = sum(group.attempts for group in groups)
        several = any(group.max_epoch > 1 for group in groups)
        distinct_scenarios = select(func.count(func.distinct(a.scenario_id))).where(
            a.run_id == run_id, a.superseded.is_(False)
        )
        return RunFigureTallies(
            groups=groups,
            scenarios=browse._count(connection, distinct_scenarios) if several else count,
            durations=browse._percentiles(connection, run_id, count),
            retried=browse._count(
                connection, select(func.count()).where(a.run_id == run_id, a.superseded.is_(True))
            ),
            checks=browse._check_tallies(connection, run_id),
            median_turns=median,
        )


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


def flagged_attempts(store: Store, run_id: str, median_turns: float) -> Iterator[FlaggedAttempt]:
    """The final attempts of a run that raise a flag other than `flaky`, ordered by scenario (in
    code point order) and epoch, each with its check results that may raise one (in order)."""
    a = attempts.c
    checks = check_results.alias("flag_checks")
    raising = or_(  # the checks' flags by the join, not by a subquery per attempt and flag
        flag_condition(run_id, "long", median_turns),
        flag_condition(run_id, "hit_max_turns", median_turns),
        browse._near_own_threshold(NEAR_MARGIN),
        checks.c.attempt_id.is_not(None),
    )
    columns = (a.id, a.scenario_id, a.epoch, a.verdict, a.turns, a.user_turns, a.hit_max_turns)
    query = (
        select(*columns, a.score, a.threshold, *_check_columns(checks))
        .select_from(
            attempts.outerjoin(checks, and_(checks.c.attempt_id == a.id, _may_flag(checks)))
        )
        .where(a.run_id == run_id, a.superseded.is_(False), raising)
    )
    with store.engine.connect() as connection:
        order = _code_point_order(a.scenario_id, connection.dialect.name)
        rows = connection.execute(query.order_by(order, a.epoch, checks.c.position))
        held: FlaggedAttempt | None = None
        for row in rows:
            if held is None or held.id != row[0]:
                if held is not None:
                    yield held
                held = FlaggedAttempt(*row[:9])
            if row[9] is not None:
                held.checks.append(FlagCheck(*row[9:]))
        if held is not None:
            yield held


def _check_columns(checks: Any) -> tuple[Any, ...]:
    return checks.c.label, checks.c.score, checks.c.threshold, checks.c.reason


def _may_flag(checks: Any) -> ColumnElement[bool]:
    """A check result that report/flags.py may flag: a partial score within NEAR_MARGIN of its
    own threshold, or a reason that notes a suspicious patch."""
    c = checks.c
    near = and_(
        c.threshold.is_not(None),
        c.score > 0,
        c.score < 1,
        func.abs(c.score - c.threshold) <= NEAR_MARGIN,
    )
    return or_(near, c.reason.contains(SUSPICIOUS_PATCH, autoescape=True))


def _code_point_order(column: Any, dialect: str) -> Any:
    """`column` ordered by code point, as Python orders strings: SQLite's default (BINARY) does,
    PostgreSQL's database collation may not."""
    return column.collate("C") if dialect == "postgresql" else column


def verdict_groups(store: Store, run_id: str) -> tuple[list[VerdictGroup], float | None]:
    """A run's final attempts grouped as store/browse.py's figures group them (their `long`
    counts, which need the run's median turns, left at nought), and their median duration."""
    with store.engine.connect() as connection:
        groups = browse._verdict_groups(connection, run_id, median_turns=0)
        count = sum(group.attempts for group in groups)
        return groups, browse._percentiles(connection, run_id, count)[50]
