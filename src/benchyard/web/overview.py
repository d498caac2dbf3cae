"""A run's figures for its page, from the aggregates the database computed (store/browse.py), in
the report's own models: the same summary `benchyard report` prints, without loading the run's
attempts into Python. Runs that can no longer change (not queued, not running) are remembered."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from benchyard.report.build import category_figures
from benchyard.report.model import CategoryCounts, CheckCounts, Durations, Summary
from benchyard.report.stats import ratio, wilson_interval
from benchyard.runner.failures import CLAIMED_KINDS, COUNTED_VERDICTS, FailureKind
from benchyard.store.browse import PERCENTILES, RunFigureTallies, VerdictGroup, figure_tallies
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

ACTIVE_STATUSES = frozenset({"queued", "running"})
REMEMBERED_RUNS = 64


@dataclass(frozen=True)
class RunFigures:
    summary: Summary
    categories: dict[str, CategoryCounts]
    category_intervals: dict[str, tuple[float, float] | None]
    checks: dict[str, CheckCounts]
    check_intervals: dict[str, tuple[float, float] | None]
    flags: dict[str, int]
    median_turns: float


def run_figures(tallies: RunFigureTallies) -> RunFigures:
    categories = category_counts(tallies.groups)
    checks = {
        tally.check_type: CheckCounts(
            passed=tally.passed,
            total=tally.total,
            pass_rate=ratio(tally.passed, tally.total),
            pass_rate_ci95=wilson_interval(tally.passed, tally.total),
        )
        for tally in tallies.checks
    }
    return RunFigures(
        summary=summary(tallies),
        categories=categories,
        category_intervals={
            name: wilson_interval(c.passed, c.counted) for name, c in categories.items()
        },
        checks=checks,
        check_intervals={name: wilson_interval(c.passed, c.total) for name, c in checks.items()},
        flags=tallies.flags,
        median_turns=tallies.median_turns,
    )


def summary(tallies: RunFigureTallies) -> Summary:
    """report/build.py's `summarise`, over groups of attempts instead of the attempts."""
    groups = tallies.groups
    counted = [g for g in groups if g.verdict in COUNTED_VERDICTS]
    negatives = [g for g in counted if g.negative]
    passed = sum(g.attempts for g in counted if g.verdict == "passed")
    counted_n = sum(g.attempts for g in counted)
    errors = sum(g.attempts for g in groups if g.verdict == "error")
    attempts = sum(g.attempts for g in groups)
    costs = [g.cost_usd for g in groups if g.cost_usd is not None]
    judge_costs = [g.judge_cost_usd for g in groups if g.judge_cost_usd is not None]
    negative_n = sum(g.attempts for g in negatives)
    return Summary(
        task_count=tallies.scenarios,
        attempt_count=attempts,
        passed=passed,
        failed=sum(g.attempts for g in counted if g.verdict == "failed"),
        timeouts=sum(g.attempts for g in counted if g.verdict == "timeout"),
        errors=errors,
        counted=counted_n,
        accuracy=ratio(passed, counted_n),
        accuracy_ci95=wilson_interval(passed, counted_n),
        error_rate=ratio(errors, attempts),
        accuracy_if_errors_failed=ratio(passed, attempts),
        claimed_faults=sum(
            g.attempts for g in counted if g.verdict == "failed" and g.failure_kind in CLAIMED_KINDS
        ),
        avg_turns=ratio(sum(g.turns for g in counted), counted_n),
        false_positive_rate=ratio(
            sum(g.attempts for g in negatives if g.verdict != "passed"), negative_n
        ),
        negative_count=negative_n,
        retried_tries=tallies.retried,
        tokens_in=sum(g.tokens_in for g in groups),
        tokens_out=sum(g.tokens_out for g in groups),
        cost_usd=sum(costs) if costs else None,
        judge_tokens_in=sum(g.judge_tokens_in for g in groups),
        judge_tokens_out=sum(g.judge_tokens_out for g in groups),
        judge_cost_usd=sum(judge_costs) if judge_costs else None,
        hit_max_turns=sum(g.hit_max_turns for g in groups),
        reasoning_truncated=sum(
            g.attempts for g in groups if g.failure_kind == FailureKind.REASONING_TRUNCATED.value
        ),
        durations=Durations(
            p50_sec=tallies.durations.get(PERCENTILES[0]),
            p90_sec=tallies.durations.get(PERCENTILES[1]),
            p99_sec=tallies.durations.get(PERCENTILES[2]),
            max_sec=max((g.max_duration_sec for g in groups), default=None),
            total_attempt_sec=sum(g.duration_sec for g in groups),
        ),
    )


def category_counts(groups: list[VerdictGroup]) -> dict[str, CategoryCounts]:
    """report/build.py's per-category raw counts, over groups of attempts."""
    result = {}
    for category in sorted({g.category for g in groups}):
        members = [g for g in groups if g.category == category]
        counted = [g for g in members if g.verdict in COUNTED_VERDICTS]
        passed = sum(g.attempts for g in counted if g.verdict == "passed")
        counted_n = sum(g.attempts for g in counted)
        result[category] = category_figures(
            passed,
            counted_n,
            sum(g.attempts for g in members if g.verdict == "error"),
            sum(g.attempts for g in members if g.verdict == "timeout"),
            sum(g.attempts for g in members),
        )
    return result


class FiguresCache:
    """The figures of runs that can no longer change, by run id, status and end (a run cancelled
    or finished since is computed again); the newest REMEMBERED_RUNS of them."""

    def __init__(self, size: int = REMEMBERED_RUNS) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, str, object], RunFigures] = OrderedDict()
        self._lock = threading.Lock()

    def figures(self, store: Store, run: RunRecord) -> RunFigures:
        if run.status in ACTIVE_STATUSES:
            return run_figures(figure_tallies(store, run.id))
        key = (run.id, run.status, run.finished_at)
        with self._lock:
            known = self._entries.get(key)
            if known is not None:
                self._entries.move_to_end(key)
                return known
        computed = run_figures(figure_tallies(store, run.id))
        with self._lock:
            self._entries[key] = computed
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return computed

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
