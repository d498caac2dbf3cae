"""Comparing runs of one benchmark: the first is the baseline, each later run a candidate.

Attempts are paired by (scenario, epoch); a pair counts when both verdicts count (passed, failed
or timeout). Only the scenarios whose own content hash (attempts.scenario_hash) is the same in
both runs are paired; the changed ones are listed, and where attempts have no such hash (recorded
before it) the runs' whole-benchmark hash decides, as before. The accuracy delta, its interval
and its test are computed on the pairs: the exact McNemar test and Newcombe's interval with one
pair per scenario, a cluster-robust test and interval by scenario with epochs, and the minimum
detectable effect of the test used; category, cost, turn and duration deltas on each run's own
figures.

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
from benchyard.report.lineage import lineage
from benchyard.report.model import (
    CandidateComparison,
    CategoryDelta,
    Comparison,
    RunFigures,
    ScenarioRow,
)
from benchyard.report.stats import (
    clustered_mean,
    clustered_proportion_interval,
    mcnemar_exact,
    mcnemar_standard_error,
    minimum_detectable_effect,
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
        check_same_benchmark(runs, whole=False)
    sides = [_side(store, run, merged) for run in runs]
    baseline = sides[0]
    versions = [scenario_versions(baseline, side) for side in sides[1:]]
    if not allow_version_mismatch:
        for side, found in zip(sides[1:], versions, strict=True):
            check_versions(baseline, side, found)
    if not allow_partial:
        for side in sides:
            check_whole(side, baseline)
    edited = [set(v.changed) for v in versions]
    scenarios, unchanged = _rows(
        [side.outcomes for side in sides], list_unchanged, edited, allow_version_mismatch
    )
    return Comparison(
        alpha=alpha,
        baseline=baseline.figures,
        candidates=[
            _candidate(baseline, side, alpha, found, paired_anyway=allow_version_mismatch)
            for side, found in zip(sides[1:], versions, strict=True)
        ],
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


@dataclass(frozen=True)
class ScenarioVersions:
    """Which scenarios of two runs changed between them, by each attempt's own scenario hash."""

    changed: list[str]  # in both runs, with another scenario hash
    unknown: list[str]  # a run's attempt has no scenario hash (recorded before migration 0015)
    shared: int  # scenarios in both runs (not counted, 0, when whole_same)
    whole_same: bool  # the runs' whole-benchmark hashes are the same

    @property
    def per_scenario(self) -> bool:
        """Whether the scenario hashes decide (else the whole-benchmark hash does, as before)."""
        return self.whole_same or not self.unknown


def scenario_versions(baseline: _Side, side: _Side) -> ScenarioVersions:
    """The scenarios in both runs whose own content hash differs, and those that cannot be told
    (an attempt recorded before per-scenario hashes). Runs of the same whole-benchmark hash have
    every scenario unchanged (and their scenario hashes are not read)."""
    if not version_differences(baseline.run, side.run):
        return ScenarioVersions([], [], 0, True)
    return versions_between(
        baseline.run,
        side.run,
        scenario_hashes(baseline.outcomes.values()),
        scenario_hashes(side.outcomes.values()),
    )


def versions_between(
    first: RunRecord,
    run: RunRecord,
    before: Mapping[str, str | None],
    after: Mapping[str, str | None],
) -> ScenarioVersions:
    """`scenario_versions` from each run's scenario hashes (`scenario_hashes`)."""
    shared = sorted(before.keys() & after.keys())
    whole_same = not version_differences(first, run)
    if whole_same:
        return ScenarioVersions([], [], len(shared), True)
    unknown = [sid for sid in shared if None in (before[sid], after[sid])]
    changed = [sid for sid in shared if sid not in unknown and before[sid] != after[sid]]
    return ScenarioVersions(changed, unknown, len(shared), False)


def version_differences(run: RunRecord, other: RunRecord) -> list[str]:
    return [
        what
        for what, here, there in (
            ("version", run.benchmark_version, other.benchmark_version),
            ("content hash", run.benchmark_hash, other.benchmark_hash),
        )
        if here != there
    ]


def scenario_hashes(outcomes: Iterable[Outcome]) -> dict[str, str | None]:
    """Each scenario's hash; None when one of its attempts has none, or when they disagree."""
    found: dict[str, str | None] = {}
    for outcome in outcomes:
        here = found.setdefault(outcome.scenario_id, outcome.scenario_hash)
        if here != outcome.scenario_hash:
            found[outcome.scenario_id] = None
    return found


def check_versions(baseline: _Side, side: _Side, versions: ScenarioVersions) -> None:
    """Refuse a run of other benchmark content when its scenarios cannot be told apart (attempts
    recorded before per-scenario hashes: the whole-benchmark hash decides, as before), or when
    every scenario the two runs share changed; a run where only some scenarios changed is
    compared on the others."""
    if versions.whole_same:
        return
    run, first = side.run, baseline.run
    hint = "compare them anyway with --allow-version-mismatch"
    if versions.unknown:
        raise CompareRefused(
            f"run {run.id[:8]} is of {_identity(run)} but the baseline {first.id[:8]} is of "
            f"{_identity(first)} (different {', '.join(version_differences(run, first))}), "
            f"and {len(versions.unknown)} of the "
            "scenarios they share have attempts recorded before per-scenario hashes (store "
            "migration 0015), so the whole-benchmark hash decides; " + hint
        )
    if versions.shared and len(versions.changed) == versions.shared:
        raise CompareRefused(
            f"run {run.id[:8]} is of {_identity(run)} but the baseline {first.id[:8]} is of "
            f"{_identity(first)}, and every one of the {versions.shared} scenarios they share "
            "changed: nothing is left to pair; " + hint
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


def outcome_figures(run: RunRecord, outcomes: Collection[Outcome]) -> RunFigures:
    """A run's figures (not merged with the runs it re-ran) from its final outcomes alone, as
    its report's summary gives them: what `history` shows of a run with two final tries of one
    attempt."""
    return _figures(run, [run.id], outcomes, _tallies(outcomes).values())


@dataclass(frozen=True)
class FigureSums:
    """What a run's figures are computed from: its final attempts' counts and sums."""

    passed: int
    counted: int
    errors: int
    attempts: int
    counted_turns: int
    cost_usd: float | None  # None when no attempt had a cost
    p50_sec: float | None
    total_attempt_sec: float
    interval: tuple[tuple[float, float] | None, str]  # accuracy_interval's


def run_figures(run: RunRecord, chain: list[str], sums: FigureSums) -> RunFigures:
    """The run's figures as its report's summary gives them (report/build.py's `summarise`)."""
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
        accuracy=ratio(sums.passed, sums.counted),
        accuracy_ci95=sums.interval[0],
        accuracy_ci95_method=sums.interval[1],
        passed=sums.passed,
        counted=sums.counted,
        errors=sums.errors,
        attempt_count=sums.attempts,
        cost_usd=sums.cost_usd,
        avg_turns=ratio(sums.counted_turns, sums.counted),
        p50_sec=sums.p50_sec,
        total_attempt_sec=sums.total_attempt_sec,
        partial=partial,
        scope=scope,
    )


def _figures(
    run: RunRecord, chain: list[str], outcomes: Collection[Outcome], tallies: Collection[_Tally]
) -> RunFigures:
    """The run's figures from its final outcomes and their tallies per category."""
    costs = [o.cost_usd for o in outcomes if o.cost_usd is not None]
    durations = [o.duration_sec for o in outcomes]
    sums = FigureSums(
        passed=sum(t.passed for t in tallies),
        counted=sum(t.counted for t in tallies),
        errors=sum(t.errors for t in tallies),
        attempts=len(outcomes),
        counted_turns=sum(o.turns for o in outcomes if o.verdict in COUNTED_VERDICTS),
        cost_usd=sum(costs) if costs else None,
        p50_sec=percentile(durations, 50),
        total_attempt_sec=sum(durations),
        interval=accuracy_interval(outcomes),
    )
    return run_figures(run, chain, sums)


def accuracy_interval(outcomes: Collection[Outcome]) -> tuple[tuple[float, float] | None, str]:
    """A run's accuracy interval and how it was computed: Wilson's with one counted attempt per
    scenario; with epochs, the cluster-robust interval by scenario (a scenario's attempts are not
    independent trials), falling back to Wilson's when one scenario was counted."""
    if len({outcome.epoch for outcome in outcomes}) < 2:  # one attempt per scenario
        counted = [outcome.verdict for outcome in outcomes if _counted(outcome)]
        return wilson_interval(counted.count("passed"), len(counted)), "wilson"
    clusters: dict[str, tuple[int, int]] = {}
    for outcome in outcomes:
        if _counted(outcome):
            passed, count = clusters.get(outcome.scenario_id, (0, 0))
            clusters[outcome.scenario_id] = (passed + (outcome.verdict == "passed"), count + 1)
    return cluster_interval(list(clusters.values()))


def cluster_interval(
    clusters: Sequence[tuple[int, int]],
) -> tuple[tuple[float, float] | None, str]:
    """The accuracy interval of (passed, counted) per scenario: cluster-robust when a scenario
    has several counted attempts (and two scenarios or more), else Wilson's."""
    if any(count > 1 for _, count in clusters):
        interval = clustered_proportion_interval(clusters)
        if interval is not None:
            return interval, CLUSTERED_METHOD
    passed, counted = sum(p for p, _ in clusters), sum(c for _, c in clusters)
    return wilson_interval(passed, counted), "wilson"


def check_same_benchmark(runs: Sequence[RunRecord], whole: bool = True) -> None:
    """Refuse runs of different benchmarks or profiles, naming what differs; and, when `whole`,
    of different versions or contents too (compare itself judges those scenario by scenario:
    `check_versions`)."""
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
            if here != there and (whole or what in ("name", "profile"))
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


def _candidate(
    baseline: _Side,
    side: _Side,
    alpha: float,
    versions: ScenarioVersions,
    paired_anyway: bool = False,
) -> CandidateComparison:
    left_out = set() if paired_anyway else set(versions.changed)
    table, errors, clusters = _pair_counts(baseline.outcomes, side.outcomes, left_out)
    paired = sum(table.values())
    b, c = table["pass_to_fail"], table["fail_to_pass"]
    accuracy = _accuracy_test(table, clusters)
    regression = accuracy.p_value < alpha and c < b
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
        accuracy_delta_ci95=accuracy.interval,
        mcnemar_p=mcnemar_exact(b, c),
        test=accuracy.test,
        test_reason=accuracy.reason,
        p_value=accuracy.p_value,
        accuracy_delta_ci95_method=accuracy.method,
        naive_accuracy_delta_ci95=accuracy.naive_interval,
        scenarios_paired=len(clusters),
        minimum_detectable_effect=accuracy.minimum_detectable_effect,
        scenario_versions="per scenario" if versions.per_scenario else "whole benchmark",
        changed_scenarios=versions.changed,
        changed_paired=paired_anyway and bool(versions.changed),
        significant_regression=regression,
        significant_improvement=accuracy.p_value < alpha and c > b,
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


@dataclass(frozen=True)
class _AccuracyTest:
    """The test of the paired accuracy change, its interval and what it could have detected."""

    test: str
    reason: str
    p_value: float
    interval: tuple[float, float] | None
    method: str
    naive_interval: tuple[float, float] | None
    minimum_detectable_effect: float | None


MCNEMAR = "exact McNemar"
CLUSTERED = "cluster-robust paired z-test by scenario"
CLUSTERED_METHOD = "cluster-robust by scenario"


def _accuracy_test(
    table: Mapping[str, int], clusters: Mapping[str, tuple[int, int]]
) -> _AccuracyTest:
    """With one pair per scenario, the exact McNemar test and Newcombe's interval (the pairs are
    independent). With epochs, a scenario's pairs are not independent (an agent that fails a
    scenario tends to fail it every epoch): the test and the interval come from the per-scenario
    sums of differences with a cluster-robust variance, so that 3 epochs of 10 scenarios do not
    count as 30 independent cases."""
    b, c = table["pass_to_fail"], table["fail_to_pass"]
    paired = sum(table.values())
    naive = paired_difference_interval(table["both_passed"], b, c, table["both_failed"])
    epochs = any(count > 1 for _, count in clusters.values())
    mean = clustered_mean(list(clusters.values())) if epochs else None
    if mean is None:
        reason = (
            "one pair per scenario: the pairs are independent, and the exact test is right "
            "however few flips there are"
            if not epochs
            else "epochs, but one scenario paired: no spread between scenarios to estimate"
        )
        mde = minimum_detectable_effect(mcnemar_standard_error(b, c, paired))
        return _AccuracyTest(MCNEMAR, reason, mcnemar_exact(b, c), naive, "newcombe", naive, mde)
    reason = (
        f"epochs: {mean.units} pairs in {mean.clusters} scenarios, and pairs of one scenario are "
        "not independent, so the variance comes from the per-scenario sums of differences "
        "(normal approximation; approximate with few scenarios)"
    )
    return _AccuracyTest(
        CLUSTERED,
        reason,
        mean.p_value(),
        mean.interval(),
        CLUSTERED_METHOD,
        naive,
        minimum_detectable_effect(mean.standard_error),
    )


def _pair_counts(
    before: Mapping[Key, Outcome], after: Mapping[Key, Outcome], left_out: Collection[str] = ()
) -> tuple[dict[str, int], dict[str, int], dict[str, tuple[int, int]]]:
    """The 2x2 table of the pairs counted in both runs, the pairs with an error on a side, and
    per scenario (sum of paired differences, pairs counted in both); the scenarios `left_out`
    (changed between the runs) are not paired."""
    table = {"both_passed": 0, "pass_to_fail": 0, "fail_to_pass": 0, "both_failed": 0}
    errors = {"both_errored": 0, "counted_to_error": 0, "pass_to_error": 0, "error_to_counted": 0}
    clusters: dict[str, tuple[int, int]] = {}
    for key, outcome in before.items():
        other = after.get(key)
        if other is None or key[0] in left_out:
            continue
        counted_before, counted_after = _counted(outcome), _counted(other)
        if counted_before and counted_after:
            passed_before, passed_after = outcome.verdict == "passed", other.verdict == "passed"
            table[_cell(passed_before, passed_after)] += 1
            total, count = clusters.get(key[0], (0, 0))
            clusters[key[0]] = (total + passed_after - passed_before, count + 1)
        elif counted_before:
            errors["counted_to_error"] += 1
            errors["pass_to_error"] += outcome.verdict == "passed"
        elif counted_after:
            errors["error_to_counted"] += 1
        else:
            errors["both_errored"] += 1
    return table, errors, clusters


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
    outcomes: list[dict[Key, Outcome]],
    list_unchanged: bool,
    edited: list[set[str]],
    paired_anyway: bool = False,
) -> tuple[list[ScenarioRow], int]:
    """The rows to list, flips first, and how many rows have the same verdict in every run;
    `edited` holds each candidate's changed scenarios, whose rows are not flips unless
    `paired_anyway`."""
    every = set().union(*outcomes)
    changed = _changed(outcomes)
    listed = every if list_unchanged else changed
    rows = [
        _row(key, [by_key.get(key) for by_key in outcomes], edited, paired_anyway) for key in listed
    ]
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


def _row(
    key: Key, found: list[Outcome | None], edited: list[set[str]], paired_anyway: bool
) -> ScenarioRow:
    category = next(outcome.category for outcome in found if outcome is not None)
    changed = [key[0] in scenarios for scenarios in edited]
    return ScenarioRow(
        scenario_id=key[0],
        epoch=key[1],
        category=category,
        verdicts=[outcome.verdict if outcome else None for outcome in found],
        flips=[
            None if was_edited and not paired_anyway else _flip(found[0], other)
            for other, was_edited in zip(found[1:], changed, strict=True)
        ],
        changed=changed,
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
