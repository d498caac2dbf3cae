"""Figures from raw counts, however they were counted (folded over attempts in report/build.py,
by the database in report/aggregated.py): a category's accuracy and a check's pass rate, each
with its interval."""

from __future__ import annotations

from benchyard.report.model import CategoryCounts, CheckCounts
from benchyard.report.stats import ratio, wilson_interval


def category_figures(
    passed: int, counted: int, errors: int, timeouts: int, attempts: int
) -> CategoryCounts:
    """A category's raw counts with its accuracy and that accuracy's interval."""
    return CategoryCounts(
        passed=passed,
        counted=counted,
        errors=errors,
        timeouts=timeouts,
        attempts=attempts,
        raw=f"{passed}/{counted}",
        accuracy=ratio(passed, counted),
        accuracy_ci95=wilson_interval(passed, counted),
    )


def check_counts(tallies: dict[str, list[int]]) -> dict[str, CheckCounts]:
    return {
        name: CheckCounts(
            passed=p, total=t, pass_rate=ratio(p, t), pass_rate_ci95=wilson_interval(p, t)
        )
        for name, (p, t) in sorted(tallies.items())
    }
