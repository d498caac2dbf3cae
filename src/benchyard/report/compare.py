"""Comparing runs of one benchmark: the first is the baseline, each later run a candidate.

Attempts are paired by (scenario, epoch); a pair counts when both verdicts count (passed, failed
or timeout). The accuracy delta, its interval and the exact McNemar test are computed on the
pairs; category, cost, turn and duration deltas on each run's own figures.

Errors are left out of accuracy, so a change in errors is judged apart (docs/queue-and-compare.md):
the error rate's paired change with its own exact McNemar test, and the accuracy test again with
the candidate's new errors counted as failures. A significant rise in errors, or a drop that is
significant once the new errors count as failures, is a regression as much as a significant drop
on the counted pairs."""

from __future__ import annotations

from collections.abc import Sequence

from benchyard.errors import BenchyardError
from benchyard.report.build import build_report, final_attempts
from benchyard.report.model import (
    CandidateComparison,
    CategoryDelta,
    Comparison,
    RunFigures,
    RunInfo,
    RunReport,
    ScenarioRow,
)
from benchyard.report.stats import mcnemar_exact, paired_difference_interval, significantly_more
from benchyard.runner.failures import COUNTED_VERDICTS
from benchyard.store.records import AttemptRecord, RunRecord
from benchyard.store.store import Store

Key = tuple[str, int]
FLIP_ORDER = {"pass_to_fail": 0, "fail_to_pass": 1}


class CompareRefused(BenchyardError):
    """Runs that cannot be compared as asked."""


def compare_runs(
    store: Store,
    runs: Sequence[RunRecord],
    *,
    alpha: float = 0.05,
    merged: bool = False,
    allow_version_mismatch: bool = False,
) -> Comparison:
    if len(runs) < 2:
        raise CompareRefused("give at least two runs: a baseline and a run to compare with it")
    if not allow_version_mismatch:
        check_same_benchmark(runs)
    reports = [build_report(store, run, merged=merged) for run in runs]
    outcomes = [
        {(a.scenario_id, a.epoch): a for a in final_attempts(store, _chain(store, run, merged))}
        for run in runs
    ]
    baseline = reports[0]
    return Comparison(
        alpha=alpha,
        baseline=run_figures(baseline),
        candidates=[
            _candidate(baseline, outcomes[0], report, attempts, alpha)
            for report, attempts in zip(reports[1:], outcomes[1:], strict=True)
        ],
        scenarios=_rows(outcomes),
    )


def _chain(store: Store, run: RunRecord, merged: bool) -> list[RunRecord]:
    return store.run_chain(run) if merged else [run]


def check_same_benchmark(runs: Sequence[RunRecord]) -> None:
    """Refuse runs of different benchmarks, versions or contents, naming what differs."""
    first = runs[0]
    for run in runs[1:]:
        differs = [
            what
            for what, here, there in (
                ("name", run.benchmark_name, first.benchmark_name),
                ("version", run.benchmark_version, first.benchmark_version),
                ("content hash", run.benchmark_hash, first.benchmark_hash),
                ("profile", _profile(run), _profile(first)),
            )
            if here != there
        ]
        if differs:
            raise CompareRefused(
                f"run {run.id[:8]} is of {_identity(run)} but the baseline {first.id[:8]} is of "
                f"{_identity(first)} (different {', '.join(differs)}); "
                "compare them anyway with --allow-version-mismatch"
            )


def _identity(run: RunRecord) -> str:
    return (
        f"{run.benchmark_name} {run.benchmark_version} ({run.benchmark_hash[:19]}, "
        f"profile {_profile(run)})"
    )


def _profile(run: RunRecord) -> str:
    """The run's profile (`--profile`, spec/profiles.py): runs of different ones cover different
    scenarios, and are never compared without saying so."""
    return str(run.settings.get("profile") or "full")


def run_scope(run: RunInfo) -> tuple[bool, str]:
    """Whether the run covered only part of its benchmark, and what it covered: a rerun of some
    attempts (unless merged with the runs it re-ran), a profile, filters, a limit."""
    parts = []
    if run.parent_run_id and len(run.merged_runs) < 2:
        parts.append(f"rerun of {run.parent_run_id[:8]}")
    if run.settings.get("profile"):
        parts.append(f"profile {run.settings['profile']}")
    filters = run.settings.get("filters") or []
    if filters:
        parts.append("filter " + " ".join(str(f) for f in filters))
    if run.settings.get("limit"):
        parts.append(f"limit {run.settings['limit']}")
    merged = f" (merged over {len(run.merged_runs)} runs)" if len(run.merged_runs) > 1 else ""
    return bool(parts), ("; ".join(parts) or "all scenarios") + merged


def run_figures(report: RunReport) -> RunFigures:
    run, summary = report.run, report.summary
    partial, scope = run_scope(run)
    return RunFigures(
        id=run.id,
        agent=run.agent.name,
        commit=run.agent.commit,
        dirty=run.agent.dirty,
        benchmark=run.benchmark,
        started_at=run.started_at,
        status=run.status,
        accuracy=summary.accuracy,
        accuracy_ci95=summary.accuracy_ci95,
        passed=summary.passed,
        counted=summary.counted,
        errors=summary.errors,
        attempt_count=summary.attempt_count,
        cost_usd=summary.cost_usd,
        avg_turns=summary.avg_turns,
        p50_sec=summary.durations.p50_sec,
        total_attempt_sec=summary.durations.total_attempt_sec,
        partial=partial,
        scope=scope,
    )


def _candidate(
    baseline: RunReport,
    before: dict[Key, AttemptRecord],
    report: RunReport,
    after: dict[Key, AttemptRecord],
    alpha: float,
) -> CandidateComparison:
    table = {"both_passed": 0, "pass_to_fail": 0, "fail_to_pass": 0, "both_failed": 0}
    errors = {"both_errored": 0, "counted_to_error": 0, "pass_to_error": 0, "error_to_counted": 0}
    for key, attempt in before.items():
        other = after.get(key)
        if other is None:
            continue
        if _counted(attempt) and _counted(other):
            table[_cell(attempt.verdict == "passed", other.verdict == "passed")] += 1
        elif _counted(attempt):
            errors["counted_to_error"] += 1
            errors["pass_to_error"] += attempt.verdict == "passed"
        elif _counted(other):
            errors["error_to_counted"] += 1
        else:
            errors["both_errored"] += 1
    paired = sum(table.values())
    b, c = table["pass_to_fail"], table["fail_to_pass"]
    p_value = mcnemar_exact(b, c)
    regression = significantly_more(b, c, alpha)
    # The error rate's paired change: new errors against errors gone.
    new, gone, both = errors["counted_to_error"], errors["error_to_counted"], errors["both_errored"]
    compared = paired + new + gone + both
    error_p = mcnemar_exact(new, gone)
    error_rise = significantly_more(new, gone, alpha)
    # Accuracy again, with the new errors counted as failures (the baseline's errors stay out).
    worst_b = b + errors["pass_to_error"]
    worst_p = mcnemar_exact(worst_b, c)
    hidden = not regression and significantly_more(worst_b, c, alpha)
    return CandidateComparison(
        run=run_figures(report),
        paired=paired,
        **table,
        accuracy_delta=(c - b) / paired if paired else None,
        accuracy_delta_ci95=paired_difference_interval(
            table["both_passed"], b, c, table["both_failed"]
        ),
        mcnemar_p=p_value,
        significant_regression=regression,
        significant_improvement=significantly_more(c, b, alpha),
        compared=compared,
        baseline_errors=gone + both,
        errors=new + both,
        counted_to_error=new,
        pass_to_error=errors["pass_to_error"],
        error_to_counted=gone,
        error_rate_delta=(new - gone) / compared if compared else None,
        error_rate_delta_ci95=paired_difference_interval(both, gone, new, paired),
        error_p=error_p,
        significant_error_rise=error_rise,
        errors_as_failures_p=worst_p,
        errors_hide_regression=hidden,
        regression=regression or error_rise or hidden,
        categories=_category_deltas(baseline, report),
        cost_delta_usd=_delta(report.summary.cost_usd, baseline.summary.cost_usd),
        avg_turns_delta=_delta(report.summary.avg_turns, baseline.summary.avg_turns),
        p50_sec_delta=_delta(report.summary.durations.p50_sec, baseline.summary.durations.p50_sec),
        total_attempt_sec_delta=report.summary.durations.total_attempt_sec
        - baseline.summary.durations.total_attempt_sec,
    )


def _counted(attempt: AttemptRecord) -> bool:
    return attempt.verdict in COUNTED_VERDICTS


def _cell(passed_before: bool, passed_after: bool) -> str:
    if passed_before:
        return "both_passed" if passed_after else "pass_to_fail"
    return "fail_to_pass" if passed_after else "both_failed"


def _delta(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before


def _category_deltas(baseline: RunReport, report: RunReport) -> dict[str, CategoryDelta]:
    deltas = {}
    for name in sorted({*baseline.categories, *report.categories}):
        before, after = baseline.categories.get(name), report.categories.get(name)
        deltas[name] = CategoryDelta(
            baseline_raw=before.raw if before else None,
            raw=after.raw if after else None,
            baseline_accuracy=before.accuracy if before else None,
            accuracy=after.accuracy if after else None,
            delta=_delta(after.accuracy if after else None, before.accuracy if before else None),
            baseline_errors=before.errors if before else None,
            errors=after.errors if after else None,
        )
    return deltas


def _rows(outcomes: list[dict[Key, AttemptRecord]]) -> list[ScenarioRow]:
    rows = []
    for key in sorted(set().union(*outcomes)):
        attempts = [attempts.get(key) for attempts in outcomes]
        known = next(a for a in attempts if a is not None)
        rows.append(
            ScenarioRow(
                scenario_id=key[0],
                epoch=key[1],
                category=known.category,
                verdicts=[a.verdict if a else None for a in attempts],
                flips=[_flip(attempts[0], other) for other in attempts[1:]],
            )
        )
    return sorted(rows, key=_row_order)


def _flip(before: AttemptRecord | None, after: AttemptRecord | None) -> str | None:
    if before is None or after is None or not (_counted(before) and _counted(after)):
        return None
    passed_before, passed_after = before.verdict == "passed", after.verdict == "passed"
    if passed_before == passed_after:
        return None
    return "pass_to_fail" if passed_before else "fail_to_pass"


def _row_order(row: ScenarioRow) -> tuple[int, str, int]:
    """Flips first (pass to fail, then fail to pass), then the rows whose errors changed, then the
    rest."""
    rank = min((FLIP_ORDER[f] for f in row.flips if f is not None), default=len(FLIP_ORDER))
    if rank == len(FLIP_ORDER):
        errored = [verdict == "error" for verdict in row.verdicts if verdict is not None]
        rank += 0 if any(errored) and not all(errored) else 1
    return rank, row.scenario_id, row.epoch
