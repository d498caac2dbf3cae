"""A run's figures for its page, from the aggregates the database computed (store/browse.py), in
the report's own models: the same summary `benchyard report` prints, without loading the run's
attempts into Python. Runs that can no longer change (not queued, not running) are remembered."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from benchyard.report.aggregated import category_counts, summary
from benchyard.report.model import CategoryCounts, CheckCounts, Summary
from benchyard.report.stats import ratio, wilson_interval
from benchyard.store.browse import RunFigureTallies, figure_tallies
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
