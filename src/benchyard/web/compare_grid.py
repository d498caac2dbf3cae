"""The comparison page's grid, a page at a time: the library's comparison (report/compare.py, as
`benchyard compare` computes it) lists the rows that differ, and only those; the rows with the same
verdict in every run are read from the baseline's outcomes when `show=all` asks for them, and only
the page's rows are ever made into table rows. A comparison of runs that can no longer change is
remembered, so that every later page, filter or view of it reads nothing again (at 100,000
attempts a run, computing it takes seconds; a page of it, milliseconds)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from benchyard.report.compare import FLIP_ORDER, _row_order, compare_runs
from benchyard.report.model import Comparison, ScenarioRow
from benchyard.store.outcomes import final_outcomes
from benchyard.store.records import RunRecord
from benchyard.store.store import Store
from benchyard.web.models import GridRow

Show = Literal["changed", "regressions", "all"]
SHOWS: tuple[Show, ...] = ("changed", "regressions", "all")
ACTIVE = frozenset({"queued", "running"})
REMEMBERED = 8

# A row of the grid before it is shown: a changed row as the library made it, or an unchanged one
# as (scenario, epoch, category, verdict) of the baseline, the same in every run.
Unchanged = tuple[str, int, str, str]


@dataclass
class Grid:
    """One comparison and its rows in the library's order (flips first)."""

    comparison: Comparison  # its `scenarios` are the rows that differ, and only those
    runs: int
    regressions: list[ScenarioRow]
    every: list[ScenarioRow | Unchanged] | None = None  # made on the first `show=all`
    lock: threading.Lock = field(default_factory=threading.Lock)

    def total(self, show: Show) -> int:
        if show == "all":
            return len(self.comparison.scenarios) + self.comparison.unchanged
        return len(self.regressions if show == "regressions" else self.comparison.scenarios)

    def page(
        self, store: Store, baseline: RunRecord, show: Show, offset: int, limit: int
    ) -> list[GridRow]:
        if show == "all":
            rows: Sequence[ScenarioRow | Unchanged] = self._every(store, baseline)
        elif show == "regressions":
            rows = self.regressions
        else:
            rows = self.comparison.scenarios
        return [self._grid_row(row) for row in rows[offset : offset + limit]]

    def _every(self, store: Store, baseline: RunRecord) -> list[ScenarioRow | Unchanged]:
        """Every row in the library's order: the unchanged rows (which rank with the changed rows
        that flip nothing and change no error, by scenario and epoch) merged into the others."""
        with self.lock:
            if self.every is None:
                self.every = _merged(self.comparison.scenarios, _unchanged(store, baseline, self))
            return self.every

    def _grid_row(self, row: ScenarioRow | Unchanged) -> GridRow:
        if isinstance(row, ScenarioRow):
            return GridRow(
                scenario_id=row.scenario_id,
                epoch=row.epoch,
                category=row.category,
                verdicts=row.verdicts,
                differs=True,
            )
        scenario_id, epoch, category, verdict = row
        return GridRow(
            scenario_id=scenario_id,
            epoch=epoch,
            category=category,
            verdicts=[verdict] * self.runs,
            differs=False,
        )


def is_regression(row: ScenarioRow) -> bool:
    """A row a candidate made worse: a pass-to-fail flip, or a pass that became an error."""
    return "pass_to_fail" in row.flips or (
        row.verdicts[0] == "passed" and "error" in row.verdicts[1:]
    )


def _unchanged(store: Store, baseline: RunRecord, grid: Grid) -> list[Unchanged]:
    """The baseline's rows that have the same verdict in every run: those the comparison did not
    list (a row missing from a run, or only in a later run, is listed)."""
    listed = {(row.scenario_id, row.epoch) for row in grid.comparison.scenarios}
    outcomes = final_outcomes(store, [run.id for run in store.run_chain(baseline)])
    return [
        (o.scenario_id, o.epoch, o.category, o.verdict)
        for key, o in sorted(outcomes.items())
        if key not in listed
    ]


def _merged(
    changed: list[ScenarioRow], unchanged: list[Unchanged]
) -> list[ScenarioRow | Unchanged]:
    """The changed rows (in the library's order) with the unchanged ones placed where the library
    would place them: after every flip and error change, by scenario and epoch."""
    rank = len(FLIP_ORDER) + 1  # after the flips, then the rows whose errors changed
    head = [row for row in changed if _row_order(row)[0] < rank]
    tail = changed[len(head) :]
    merged: list[ScenarioRow | Unchanged] = list(head)
    at = 0
    for row in tail:
        key = (row.scenario_id, row.epoch)
        while at < len(unchanged) and unchanged[at][:2] < key:
            merged.append(unchanged[at])
            at += 1
        merged.append(row)
    merged.extend(unchanged[at:])
    return merged


class GridCache:
    """The comparisons of runs that can no longer change, by their runs (id, status, end) and the
    comparison's options; the newest REMEMBERED of them."""

    def __init__(self, size: int = REMEMBERED) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[object, ...], Grid] = OrderedDict()
        self._lock = threading.Lock()

    def grid(
        self, store: Store, runs: Sequence[RunRecord], *, alpha: float, allow_mismatch: bool
    ) -> Grid:
        """The comparison of `runs` (compare_runs, raising what it raises), remembered when no
        run can change any more."""
        key = (tuple((r.id, r.status, r.finished_at) for r in runs), alpha, allow_mismatch)
        lasting = not any(run.status in ACTIVE for run in runs)
        if lasting:
            with self._lock:
                known = self._entries.get(key)
                if known is not None:
                    self._entries.move_to_end(key)
                    return known
        comparison = compare_runs(  # the page's one box allows both: it shows each scope
            store,
            runs,
            alpha=alpha,
            allow_version_mismatch=allow_mismatch,
            allow_partial=allow_mismatch,
            list_unchanged=False,
        )
        made = Grid(
            comparison=comparison,
            runs=len(runs),
            regressions=[row for row in comparison.scenarios if is_regression(row)],
        )
        if lasting:
            with self._lock:
                self._entries[key] = made
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
        return made
