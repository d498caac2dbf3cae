"""Comparing runs of one benchmark: the first is the baseline, each later run a candidate.

Attempts are paired by (scenario, epoch); a pair counts when both verdicts count (passed, failed
or timeout). The accuracy delta, its interval and the exact McNemar test are computed on the
pairs; category, cost, turn and duration deltas on each run's own figures.

Errors are left out of accuracy, so a change in errors is judged apart (docs/queue-and-compare.md):
the error rate's paired change with its own exact McNemar test, and the accuracy test again with
the candidate's new errors counted as failures. A significant rise in errors, or a drop that is
significant once the new errors count as failures, is a regression as much as a significant drop
on the counted pairs.

Each run's final attempts are read once, and only the columns a comparison needs
(store/outcomes.py). The rows with the same verdict in every run are counted, and listed only when
asked: at 100,000 attempts a run's unchanged rows are most of them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchyard.errors import BenchyardError
from benchyard.report.build import benchmark_identity
from benchyard.report.lineage import lineage, lineage_of
from benchyard.report.model import (
    CandidateComparison,
    CategoryDelta,
    Comparison,
    RunFigures,
    RunReport,
    ScenarioRow,
)
from benchyard.report.stats import (
    mcnemar_exact,
    paired_difference_interval,
    percentile,
    ratio,
    significantly_more,
    wilson_interval,
)
from benchyard.runner.failures import COUNTED_VERDICTS
from benchyard.store.outcomes import Key, Outcome, final_outcomes
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

FLIP_ORDER = {"pass_to_fail": 0, "fail_to_pass": 1}


class CompareRefused(BenchyardError):
    """Runs that cannot be compared as asked."""


def compare_runs(
    store: Store,
    runs: Sequence[RunRecord],
    *,
    alpha: float = 0.05,
    merged: bool = True,
    allow_version_mismatch: bool = False,
    allow_partial: bool = False,
    list_unchanged: bool = True,
) -> Comparison:
    """Each later run against the first. Every row whose verdicts differ is listed; the rows with
    the same verdict in every run are counted, and listed too when `list_unchanged`.

    A rerun is merged with the runs it re-ran (unless not `merged`), and its figures say so. A side
    that covers part of what the baseline covers (a rerun read alone, other filters or limit, an
    unfinished run) is refused, naming why, unless `allow_partial`: the McNemar test on the few
    pairs it has would call a regression "no significant change"."""
    if len(runs) < 2:
        raise CompareRefused("give at least two runs: a baseline and a run to compare with it")
    if not allow_version_mismatch:
        check_same_benchmark(runs)
    sides = [_side(store, run, merged) for run in runs]
    baseline = sides[0]
    if not allow_partial:
        for side in sides:
            check_whole(side, baseline)
    scenarios, unchanged = _rows([side.outcomes for side in sides], list_unchanged)
    return Comparison(
        alpha=alpha,
        baseline=baseline.figures,
        candidates=[_candidate(baseline, side, alpha) for side in sides[1:]],
        scenarios=scenarios,
        unchanged=unchanged,
        unchanged_listed=list_unchanged,
    )


@dataclass(frozen=True)
class _Tally:
    passed: int
    counted: int
    errors: int


@dataclass(frozen=True)
class _Side:
    """One run of a comparison: its figures, its categories and its final outcomes."""

    figures: RunFigures
    categories: dict[str, _Tally]
    outcomes: dict[Key, Outcome]
    run: RunRecord
    first: RunRecord  # the first run of its chain (the run itself unless merged): plan, scope


def _side(store: Store, run: RunRecord, merged: bool) -> _Side:
    chain = store.run_chain(run) if merged else [run]
    outcomes = final_outcomes(store, [r.id for r in chain])
    categories = _tallies(outcomes.values())
    figures = _figures(run, [r.id for r in chain], outcomes.values(), categories.values())
    return _Side(
        figures=figures,
        categories=categories,
        outcomes=outcomes,
        run=run,
        first=chain[0],
    )


def check_whole(side: _Side, baseline: _Side) -> None:
    """Refuse a side that holds part of what it should, or covers other scenarios than the
    baseline, in one line that says why and what to do."""
    run = side.run
    short = run.id[:8]
    hint = "; compare it anyway with --allow-partial"
    if run.parent_run_id and len(side.figures.merged_runs) < 2:
        raise CompareRefused(
            f"run {short} is a rerun of {run.parent_run_id[:8]} ({len(side.outcomes)} attempts) "
            f"read alone, not merged with the run it re-ran: its few pairs say nothing of the "
            f"benchmark; compare it merged (the default, without --no-merge){hint}"
        )
    planned = side.first.planned_attempts
    if len(side.outcomes) < planned:
        raise CompareRefused(
            f"run {short} is partial: {len(side.outcomes)} of its {planned} planned "
            f"attempts finished (status {run.status}); wait for it to finish or rerun it{hint}"
        )
    here, there = _coverage(side.first.settings), _coverage(baseline.first.settings)
    if here != there:
        raise CompareRefused(
            f"run {short} covers {_coverage_text(here)} but the baseline "
            f"{baseline.run.id[:8]} covers {_coverage_text(there)}: their accuracies are of "
            f"different scenarios{hint}"
        )


def _coverage(settings: Mapping[str, Any]) -> tuple[tuple[str, ...], object]:
    """The part of the benchmark a run's settings select: its filters and its limit."""
    return tuple(str(f) for f in settings.get("filters") or []), settings.get("limit") or None


def _coverage_text(coverage: tuple[tuple[str, ...], object]) -> str:
    filters, limit = coverage
    parts = [*(["filter " + " ".join(filters)] if filters else [])]
    parts += [f"limit {limit}"] if limit else []
    return "; ".join(parts) or "all scenarios"


def _tallies(outcomes: Iterable[Outcome]) -> dict[str, _Tally]:
    """Passed, counted and errors per category."""
    counts = Counter((o.category, o.verdict) for o in outcomes)
    return {
        name: _Tally(
            passed=counts[name, "passed"],
            counted=sum(counts[name, verdict] for verdict in COUNTED_VERDICTS),
            errors=counts[name, "error"],
        )
        for name in sorted({name for name, _ in counts})
    }


def _figures(
    run: RunRecord, chain: list[str], outcomes: Collection[Outcome], tallies: Collection[_Tally]
) -> RunFigures:
    """The run's figures as its report's summary gives them (report/build.py's `summarise`),
    from its final outcomes and their tallies per category."""
    passed, counted = sum(t.passed for t in tallies), sum(t.counted for t in tallies)
    counted_turns = sum(o.turns for o in outcomes if o.verdict in COUNTED_VERDICTS)
    costs = [o.cost_usd for o in outcomes if o.cost_usd is not None]
    durations = [o.duration_sec for o in outcomes]
    partial, scope = run_scope(run.parent_run_id, run.settings, len(chain))
    return RunFigures(
        id=run.id,
        lineage=lineage(run),
        merged_runs=chain,
        agent=run.agent_name,
        commit=run.agent_commit,
        dirty=run.agent_dirty,
        benchmark=benchmark_identity(run),
        started_at=run.started_at,
        status=run.status,
        accuracy=ratio(passed, counted),
        accuracy_ci95=wilson_interval(passed, counted),
        passed=passed,
        counted=counted,
        errors=sum(t.errors for t in tallies),
        attempt_count=len(outcomes),
        cost_usd=sum(costs) if costs else None,
        avg_turns=ratio(counted_turns, counted),
        p50_sec=percentile(durations, 50),
        total_attempt_sec=sum(durations),
        partial=partial,
        scope=scope,
    )


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


def run_scope(
    parent_run_id: str | None, settings: Mapping[str, Any], merged_runs: int
) -> tuple[bool, str]:
    """Whether the run covered only part of its benchmark, and what it covered: a rerun of some
    attempts (unless merged with the runs it re-ran), a profile, filters, a limit."""
    parts = []
    if parent_run_id and merged_runs < 2:
        parts.append(f"rerun of {parent_run_id[:8]}")
    if settings.get("profile"):
        parts.append(f"profile {settings['profile']}")
    filters = settings.get("filters") or []
    if filters:
        parts.append("filter " + " ".join(str(f) for f in filters))
    if settings.get("limit"):
        parts.append(f"limit {settings['limit']}")
    merged = f" (merged over {merged_runs} runs)" if merged_runs > 1 else ""
    return bool(parts), ("; ".join(parts) or "all scenarios") + merged


def run_figures(report: RunReport) -> RunFigures:
    """A report's figures, as a comparison gives them (for `history`)."""
    run, summary = report.run, report.summary
    partial, scope = run_scope(run.parent_run_id, run.settings, len(run.merged_runs))
    return RunFigures(
        id=run.id,
        lineage=lineage_of(run.parent_run_id, run.rescored_from, run.settings),
        merged_runs=run.merged_runs,
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


def _candidate(baseline: _Side, side: _Side, alpha: float) -> CandidateComparison:
    table, errors = _pair_counts(baseline.outcomes, side.outcomes)
    paired = sum(table.values())
    b, c = table["pass_to_fail"], table["fail_to_pass"]
    regression = significantly_more(b, c, alpha)
    # The error rate's paired change: new errors against errors gone.
    new, gone, both = errors["counted_to_error"], errors["error_to_counted"], errors["both_errored"]
    compared = paired + new + gone + both
    error_rise = significantly_more(new, gone, alpha)
    # Accuracy again, with the new errors counted as failures (the baseline's errors stay out).
    worst_b = b + errors["pass_to_error"]
    hidden = not regression and significantly_more(worst_b, c, alpha)
    return CandidateComparison(
        run=side.figures,
        paired=paired,
        **table,
        accuracy_delta=(c - b) / paired if paired else None,
        accuracy_delta_ci95=paired_difference_interval(
            table["both_passed"], b, c, table["both_failed"]
        ),
        mcnemar_p=mcnemar_exact(b, c),
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
        error_p=mcnemar_exact(new, gone),
        significant_error_rise=error_rise,
        errors_as_failures_p=mcnemar_exact(worst_b, c),
        errors_hide_regression=hidden,
        regression=regression or error_rise or hidden,
        categories=_category_deltas(baseline.categories, side.categories),
        **_run_deltas(baseline.figures, side.figures),
    )


def _pair_counts(
    before: Mapping[Key, Outcome], after: Mapping[Key, Outcome]
) -> tuple[dict[str, int], dict[str, int]]:
    """The 2x2 table of the pairs counted in both runs, and the pairs with an error on a side."""
    table = {"both_passed": 0, "pass_to_fail": 0, "fail_to_pass": 0, "both_failed": 0}
    errors = {"both_errored": 0, "counted_to_error": 0, "pass_to_error": 0, "error_to_counted": 0}
    for key, outcome in before.items():
        other = after.get(key)
        if other is None:
            continue
        counted_before, counted_after = _counted(outcome), _counted(other)
        if counted_before and counted_after:
            table[_cell(outcome.verdict == "passed", other.verdict == "passed")] += 1
        elif counted_before:
            errors["counted_to_error"] += 1
            errors["pass_to_error"] += outcome.verdict == "passed"
        elif counted_after:
            errors["error_to_counted"] += 1
        else:
            errors["both_errored"] += 1
    return table, errors


def _run_deltas(before: RunFigures, after: RunFigures) -> dict[str, float | None]:
    return {
        "cost_delta_usd": _delta(after.cost_usd, before.cost_usd),
        "avg_turns_delta": _delta(after.avg_turns, before.avg_turns),
        "p50_sec_delta": _delta(after.p50_sec, before.p50_sec),
        "total_attempt_sec_delta": after.total_attempt_sec - before.total_attempt_sec,
    }


def _counted(outcome: Outcome) -> bool:
    return outcome.verdict in COUNTED_VERDICTS


def _cell(passed_before: bool, passed_after: bool) -> str:
    if passed_before:
        return "both_passed" if passed_after else "pass_to_fail"
    return "fail_to_pass" if passed_after else "both_failed"


def _delta(after: float | None, before: float | None) -> float | None:
    return None if after is None or before is None else after - before


def _category_deltas(
    baseline: Mapping[str, _Tally], run: Mapping[str, _Tally]
) -> dict[str, CategoryDelta]:
    deltas = {}
    for name in sorted({*baseline, *run}):
        before, after = baseline.get(name), run.get(name)
        accuracy = ratio(after.passed, after.counted) if after else None
        baseline_accuracy = ratio(before.passed, before.counted) if before else None
        deltas[name] = CategoryDelta(
            baseline_raw=f"{before.passed}/{before.counted}" if before else None,
            raw=f"{after.passed}/{after.counted}" if after else None,
            baseline_accuracy=baseline_accuracy,
            accuracy=accuracy,
            delta=_delta(accuracy, baseline_accuracy),
            baseline_errors=before.errors if before else None,
            errors=after.errors if after else None,
        )
    return deltas


def _rows(
    outcomes: list[dict[Key, Outcome]], list_unchanged: bool
) -> tuple[list[ScenarioRow], int]:
    """The rows to list, flips first, and how many rows have the same verdict in every run."""
    every = set().union(*outcomes)
    changed = _changed(outcomes)
    listed = every if list_unchanged else changed
    rows = [_row(key, [by_key.get(key) for by_key in outcomes]) for key in listed]
    return sorted(rows, key=_row_order), len(every) - len(changed)


def _changed(outcomes: list[dict[Key, Outcome]]) -> set[Key]:
    """The (scenario, epoch) rows whose verdict differs from the baseline's in a run, or that are
    missing from a run (one pass over each run: at 100,000 rows most are unchanged)."""
    baseline, changed = outcomes[0], set()
    for run in outcomes[1:]:
        changed.update(run.keys() - baseline.keys())
        for key, outcome in baseline.items():
            twin = run.get(key)
            if twin is None or twin.verdict != outcome.verdict:
                changed.add(key)
    return changed


def _row(key: Key, found: list[Outcome | None]) -> ScenarioRow:
    category = next(outcome.category for outcome in found if outcome is not None)
    return ScenarioRow(
        scenario_id=key[0],
        epoch=key[1],
        category=category,
        verdicts=[outcome.verdict if outcome else None for outcome in found],
        flips=[_flip(found[0], other) for other in found[1:]],
    )


def _flip(before: Outcome | None, after: Outcome | None) -> str | None:
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
