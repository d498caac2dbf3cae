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

Each run's final attempts are read once, and only the columns a comparison needs. Two runs of the
same benchmark content, neither a rerun to merge (the common case), are read row by row in
(scenario, epoch) order through any `Reader` (store/compare_rows.py) and merged as they are read:
neither run's outcomes are held, only the rows that differ, and their counts are the database's;
a SQLite store at the head revision is so read without SQLAlchemy. More runs, merged reruns and
runs of other content are read whole (store/outcomes.py), their scenario hashes with them. Both
add up the same figures (durations and costs in Python, in the order read). The rows with the
same verdict in every run are counted, and listed only when asked: at 100,000 attempts a run's
unchanged rows are most of them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
from benchyard.store.compare_rows import (
    FinalRow,
    counted_by_scenario,
    epoch_count,
    final_rows,
    verdict_tallies,
)
from benchyard.store.records import RunRecord

if TYPE_CHECKING:  # SQLAlchemy's: imported only by the comparisons that read a Store
    from benchyard.store.lite import Reader
    from benchyard.store.outcomes import Key, Outcome
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
    if streamable(runs, merged):
        return compare_read(
            store.reader,
            runs,
            alpha=alpha,
            allow_version_mismatch=allow_version_mismatch,
            allow_partial=allow_partial,
            list_unchanged=list_unchanged,
        )
    _check_given(runs, allow_version_mismatch)
    from benchyard.store.outcomes import final_outcomes

    chains = [store.run_chain(run) if merged else [run] for run in runs]
    outcomes = [final_outcomes(store, [r.id for r in chain]) for chain in chains]
    sides = [_side(chain, found) for chain, found in zip(chains, outcomes, strict=True)]
    baseline = sides[0]
    versions = [
        scenario_versions(baseline.run, side.run, outcomes[0], found)
        for side, found in zip(sides[1:], outcomes[1:], strict=True)
    ]
    if not allow_version_mismatch:
        for side, found in zip(sides[1:], versions, strict=True):
            check_versions(baseline, side, found)
    left_out = [set() if allow_version_mismatch else set(v.changed) for v in versions]
    pairs = [
        _pair_counts(outcomes[0], found, out)
        for found, out in zip(outcomes[1:], left_out, strict=True)
    ]
    edited = [set(v.changed) for v in versions]
    listed = _Listing(
        *_rows(outcomes, list_unchanged, edited, allow_version_mismatch), list_unchanged
    )
    return _judged(sides, versions, pairs, listed, alpha, allow_partial, allow_version_mismatch)


def streamable(runs: Sequence[RunRecord], merged: bool) -> bool:
    """Whether `compare_read` can compare these runs: a baseline and one candidate of the same
    benchmark content (no scenario hashes to read), neither a rerun to merge with the runs it
    re-ran."""
    return (
        len(runs) == 2
        and not version_differences(*runs)
        and not (merged and any(run.parent_run_id for run in runs))
    )


def compare_read(
    reader: Reader,
    runs: Sequence[RunRecord],
    *,
    alpha: float = 0.05,
    allow_version_mismatch: bool = False,
    allow_partial: bool = False,
    list_unchanged: bool = True,
) -> Comparison:
    """`compare_runs` of runs that are `streamable`, each read row by row in (scenario, epoch)
    order and merged as read: only the rows to list are held."""
    _check_given(runs, allow_version_mismatch)
    merge = _Merge.of(reader, runs, list_unchanged)
    sums = [_RunSums.read(reader, run.id, read) for run, read in zip(runs, merge.read, strict=True)]
    sides = [
        _Side(found.figures(run, [run.id]), found.tallies(), run, run)
        for run, found in zip(runs, sums, strict=True)
    ]
    versions = [ScenarioVersions([], [], 0, True)]
    listed = _Listing(sorted(merge.rows, key=_row_order), merge.unchanged, list_unchanged)
    return _judged(
        sides, versions, [merge.pairs], listed, alpha, allow_partial, allow_version_mismatch
    )


def _check_given(runs: Sequence[RunRecord], allow_version_mismatch: bool) -> None:
    if len(runs) < 2:
        raise CompareRefused("give at least two runs: a baseline and a run to compare with it")
    if not allow_version_mismatch:
        check_same_benchmark(runs, whole=False)


def _judged(
    sides: Sequence[_Side],
    versions: Sequence[ScenarioVersions],
    pairs: Sequence[_Pairs],
    listed: _Listing,
    alpha: float,
    allow_partial: bool,
    paired_anyway: bool,
) -> Comparison:
    """The comparison of sides read either way, once each is found whole (unless
    `allow_partial`)."""
    baseline = sides[0]
    if not allow_partial:
        for side in sides:
            check_whole(side, baseline)
    return Comparison(
        alpha=alpha,
        baseline=baseline.figures,
        candidates=[
            _candidate(baseline, side, alpha, found, paired, paired_anyway)
            for side, found, paired in zip(sides[1:], versions, pairs, strict=True)
        ],
        scenarios=listed.rows,
        unchanged=listed.unchanged,
        unchanged_listed=listed.unchanged_listed,
    )


@dataclass(frozen=True)
class _Listing:
    """The rows a comparison lists, flips first, and how many rows are the same in every run."""

    rows: list[ScenarioRow]
    unchanged: int
    unchanged_listed: bool


@dataclass(frozen=True)
class _Tally:
    passed: int
    counted: int
    errors: int


@dataclass(frozen=True)
class _Side:
    """One run of a comparison: its figures and its categories."""

    figures: RunFigures
    categories: dict[str, _Tally]
    run: RunRecord
    first: RunRecord  # the first run of its chain (the run itself unless merged): plan, scope


def _side(chain: list[RunRecord], outcomes: Mapping[Key, Outcome]) -> _Side:
    """The last run of `chain` from the final outcomes over it."""
    sums = _RunSums.of(outcomes.values())
    return _Side(
        sums.figures(chain[-1], [r.id for r in chain]), sums.tallies(), chain[-1], chain[0]
    )


@dataclass(frozen=True)
class _RunSums:
    """What a run's figures and categories are computed from. The sums of floats are Python's,
    of the values in the order read (scenario, epoch), whichever way the run was read."""

    counts: Counter[tuple[str, str]]  # final outcomes by (category, verdict)
    counted_turns: int
    costs: list[float]
    durations: list[float]
    clusters: list[tuple[int, int]] | None  # with epochs, (passed, counted) by scenario

    @classmethod
    def of(cls, outcomes: Iterable[FinalRow | Outcome]) -> _RunSums:
        """From the final outcomes, each (scenario, epoch, category, verdict, turns, cost,
        duration, ...)."""
        counts: Counter[tuple[str, str]] = Counter()
        costs, durations, epochs, turns = [], [], set(), 0
        counted: dict[str, tuple[int, int]] = {}  # (passed, counted) by scenario
        for row in outcomes:
            scenario, epoch, category, verdict, row_turns, cost, duration = row[:7]
            counts[category, verdict] += 1
            epochs.add(epoch)
            if cost is not None:
                costs.append(cost)
            durations.append(duration)
            if verdict in COUNTED_VERDICTS:
                turns += row_turns
                passed, count = counted.get(scenario, (0, 0))
                counted[scenario] = (passed + (verdict == "passed"), count + 1)
        clusters = list(counted.values()) if len(epochs) > 1 else None
        return cls(counts, turns, costs, durations, clusters)

    @classmethod
    def read(cls, reader: Reader, run_id: str, merged: _Read) -> _RunSums:
        """A run merged as read (`merged`: its durations and costs, in order) with its counts
        from the database; read again whole where it has two final tries of one attempt, which
        the database's counts would both count."""
        if merged.twice:
            return cls.of(_each_last(final_rows(reader, run_id)))
        counts: Counter[tuple[str, str]] = Counter()
        turns = 0
        for category, verdict, count, verdict_turns in verdict_tallies(reader, run_id):
            counts[category, verdict] = count
            turns += verdict_turns if verdict in COUNTED_VERDICTS else 0
        several = epoch_count(reader, run_id) > 1
        clusters = counted_by_scenario(reader, run_id, COUNTED_VERDICTS) if several else None
        costs = [cost for cost in merged.costs if cost is not None]
        return cls(counts, turns, costs, merged.durations, clusters)

    def tallies(self) -> dict[str, _Tally]:
        """Passed, counted and errors per category."""
        counts = self.counts
        return {
            name: _Tally(
                passed=counts[name, "passed"],
                counted=sum(counts[name, verdict] for verdict in COUNTED_VERDICTS),
                errors=counts[name, "error"],
            )
            for name in sorted({name for name, _ in counts})
        }

    def figures(self, run: RunRecord, chain: list[str]) -> RunFigures:
        """The run's figures (`chain`: the runs merged into it)."""
        tallies = self.tallies().values()
        passed, counted = sum(t.passed for t in tallies), sum(t.counted for t in tallies)
        sums = FigureSums(
            passed=passed,
            counted=counted,
            errors=sum(t.errors for t in tallies),
            attempts=len(self.durations),
            counted_turns=self.counted_turns,
            cost_usd=sum(self.costs) if self.costs else None,
            p50_sec=percentile(self.durations, 50),
            total_attempt_sec=sum(self.durations),
            interval=self.interval(passed, counted),
        )
        return run_figures(run, chain, sums)

    def interval(self, passed: int, counted: int) -> tuple[tuple[float, float] | None, str]:
        """A run's accuracy interval and how it was computed: Wilson's with one counted attempt
        per scenario; with epochs, the cluster-robust interval by scenario (a scenario's attempts
        are not independent trials), falling back to Wilson's when one scenario was counted."""
        if self.clusters is None:  # one attempt per scenario
            return wilson_interval(passed, counted), "wilson"
        return cluster_interval(self.clusters)


def check_whole(side: _Side, baseline: _Side) -> None:
    """Refuse a side that holds part of what it should, or covers other scenarios than the
    baseline, in one line that says why and what to do."""
    run = side.run
    short = run.id[:8]
    hint = "; compare it anyway with --allow-partial"
    if run.parent_run_id and len(side.figures.merged_runs) < 2:
        raise CompareRefused(
            f"run {short} is a rerun of {run.parent_run_id[:8]} ({side.figures.attempt_count} "
            "attempts) "
            f"read alone, not merged with the run it re-ran: its few pairs say nothing of the "
            f"benchmark; compare it merged (the default, without --no-merge){hint}"
        )
    planned = side.first.planned_attempts
    if side.figures.attempt_count < planned:
        raise CompareRefused(
            f"run {short} is partial: {side.figures.attempt_count} of its {planned} planned "
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


def scenario_versions(
    first: RunRecord, run: RunRecord, before: Mapping[Key, Outcome], after: Mapping[Key, Outcome]
) -> ScenarioVersions:
    """The scenarios in both runs whose own content hash differs, and those that cannot be told
    (an attempt recorded before per-scenario hashes), from each run's final outcomes. Runs of the
    same whole-benchmark hash have every scenario unchanged (and their scenario hashes are not
    read)."""
    if not version_differences(first, run):
        return ScenarioVersions([], [], 0, True)
    return versions_between(
        first, run, scenario_hashes(before.values()), scenario_hashes(after.values())
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


def outcome_figures(run: RunRecord, outcomes: Collection[Outcome]) -> RunFigures:
    """A run's figures (not merged with the runs it re-ran) from its final outcomes alone, as
    its report's summary gives them: what `history` shows of a run with two final tries of one
    attempt."""
    return _RunSums.of(outcomes).figures(run, [run.id])


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
    pairs: _Pairs,
    paired_anyway: bool = False,
) -> CandidateComparison:
    table, errors, clusters = pairs.table, pairs.errors, pairs.clusters
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


@dataclass
class _Pairs:
    """The 2x2 table of the pairs counted in both runs, the pairs with an error on a side, and
    per scenario (sum of paired differences, pairs counted in both), added up a pair at a time."""

    table: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("both_passed", "pass_to_fail", "fail_to_pass", "both_failed"), 0
        )
    )
    errors: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("both_errored", "counted_to_error", "pass_to_error", "error_to_counted"), 0
        )
    )
    clusters: dict[str, tuple[int, int]] = field(default_factory=dict)

    def add(self, scenario: str, before: str, after: str) -> None:
        """One (scenario, epoch) in both runs, by its verdict in each."""
        counted_before, counted_after = before in COUNTED_VERDICTS, after in COUNTED_VERDICTS
        if counted_before and counted_after:
            passed_before, passed_after = before == "passed", after == "passed"
            self.table[_cell(passed_before, passed_after)] += 1
            total, count = self.clusters.get(scenario, (0, 0))
            self.clusters[scenario] = (total + passed_after - passed_before, count + 1)
        elif counted_before:
            self.errors["counted_to_error"] += 1
            self.errors["pass_to_error"] += before == "passed"
        elif counted_after:
            self.errors["error_to_counted"] += 1
        else:
            self.errors["both_errored"] += 1


def _pair_counts(
    before: Mapping[Key, Outcome], after: Mapping[Key, Outcome], left_out: Collection[str] = ()
) -> _Pairs:
    """The pairs of two runs' final outcomes; the scenarios `left_out` (changed between the
    runs) are not paired."""
    pairs = _Pairs()
    for key, outcome in before.items():
        other = after.get(key)
        if other is not None and key[0] not in left_out:
            pairs.add(key[0], outcome.verdict, other.verdict)
    return pairs


def _run_deltas(before: RunFigures, after: RunFigures) -> dict[str, float | None]:
    return {
        "cost_delta_usd": _delta(after.cost_usd, before.cost_usd),
        "avg_turns_delta": _delta(after.avg_turns, before.avg_turns),
        "p50_sec_delta": _delta(after.p50_sec, before.p50_sec),
        "total_attempt_sec_delta": after.total_attempt_sec - before.total_attempt_sec,
    }


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
    rows = []
    for key in every if list_unchanged else changed:
        found = [by_key.get(key) for by_key in outcomes]
        category = next(outcome.category for outcome in found if outcome is not None)
        verdicts = [outcome.verdict if outcome else None for outcome in found]
        rows.append(_row(key, category, verdicts, edited, paired_anyway))
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
    key: Key,
    category: str,
    verdicts: list[str | None],
    edited: list[set[str]],
    paired_anyway: bool,
) -> ScenarioRow:
    """A listed row: its verdict in each run (None where a run has none)."""
    changed = [key[0] in scenarios for scenarios in edited]
    return ScenarioRow(
        scenario_id=key[0],
        epoch=key[1],
        category=category,
        verdicts=verdicts,
        flips=[
            None if was_edited and not paired_anyway else _flip(verdicts[0], other)
            for other, was_edited in zip(verdicts[1:], changed, strict=True)
        ],
        changed=changed,
    )


def _flip(before: str | None, after: str | None) -> str | None:
    if before not in COUNTED_VERDICTS or after not in COUNTED_VERDICTS:
        return None
    passed_before, passed_after = before == "passed", after == "passed"
    if passed_before == passed_after:
        return None
    return "pass_to_fail" if passed_before else "fail_to_pass"


@dataclass
class _Read:
    """What a merge keeps of one run's rows: their durations and costs in order, and whether a
    (scenario, epoch) came twice (two final tries)."""

    durations: list[float] = field(default_factory=list)
    costs: list[float | None] = field(default_factory=list)
    twice: bool = False

    def take(self, row: FinalRow, rows: Iterator[FinalRow]) -> tuple[FinalRow, FinalRow | None]:
        """The last of the rows with `row`'s (scenario, epoch), kept (of two final tries of one
        attempt, the later read, as a dict of them would keep); the row after them."""
        after = next(rows, None)
        while after is not None and after[1] == row[1] and after[0] == row[0]:
            row, after, self.twice = after, next(rows, None), True
        self.durations.append(row[6])
        self.costs.append(row[5])
        return row, after


class _Merge:
    """A baseline and a candidate of the same benchmark content merged as they are read, each in
    (scenario, epoch) order: the pairs, the rows to list (those that differ, or every one when
    asked), how many rows are the same in both, and what each run's figures need of its rows."""

    def __init__(self, list_unchanged: bool) -> None:
        self.read = (_Read(), _Read())
        self.pairs = _Pairs()
        self.rows: list[ScenarioRow] = []
        self.unchanged = 0
        self.list_unchanged = list_unchanged

    @classmethod
    def of(cls, reader: Reader, runs: Sequence[RunRecord], list_unchanged: bool) -> _Merge:
        merge = cls(list_unchanged)
        left, right = (final_rows(reader, run.id) for run in runs)
        before, after = merge.read
        a, b = next(left, None), next(right, None)
        while a is not None and b is not None:
            if a[0] == b[0] and a[1] == b[1]:
                (kept, a), (other, b) = before.take(a, left), after.take(b, right)
                merge.both(kept, other)
            elif a[:2] < b[:2]:
                kept, a = before.take(a, left)
                merge.alone(kept, 0)
            else:
                kept, b = after.take(b, right)
                merge.alone(kept, 1)
        while a is not None:
            kept, a = before.take(a, left)
            merge.alone(kept, 0)
        while b is not None:
            kept, b = after.take(b, right)
            merge.alone(kept, 1)
        return merge

    def alone(self, row: FinalRow, side: int) -> None:
        """A (scenario, epoch) of one run only."""
        verdicts: list[str | None] = [None, None]
        verdicts[side] = row[3]
        self.rows.append(_row((row[0], row[1]), row[2], verdicts, [set()], False))

    def both(self, before: FinalRow, after: FinalRow) -> None:
        """A (scenario, epoch) in both runs."""
        self.pairs.add(before[0], before[3], after[3])
        same = before[3] == after[3]
        self.unchanged += same
        if not same or self.list_unchanged:
            verdicts: list[str | None] = [before[3], after[3]]
            self.rows.append(_row((before[0], before[1]), before[2], verdicts, [set()], False))


def _each_last(rows: Iterator[FinalRow]) -> Iterator[FinalRow]:
    """The rows, of two with the same (scenario, epoch) the later."""
    held = next(rows, None)
    if held is None:
        return
    for row in rows:
        if row[1] != held[1] or row[0] != held[0]:
            yield held
        held = row
    yield held


def _row_order(row: ScenarioRow) -> tuple[int, str, int]:
    """Flips first (pass to fail, then fail to pass), then the rows whose errors changed, then the
    rest."""
    rank = min((FLIP_ORDER[f] for f in row.flips if f is not None), default=len(FLIP_ORDER))
    if rank == len(FLIP_ORDER):
        errored = [verdict == "error" for verdict in row.verdicts if verdict is not None]
        rank += 0 if any(errored) and not all(errored) else 1
    return rank, row.scenario_id, row.epoch
