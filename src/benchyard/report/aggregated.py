"""A run's report from what the database counts: the summary, categories and checks from
store/browse.py's GROUP BY aggregates, the failures as plain rows (store/outcomes.py), the review
flags from the attempts that raise them alone, pass@k from each scenario's tallies. Its memory and
time grow with what it lists (failures, flags), not with the run: a 100,000-attempt run's report
reads no attempt it does not name. The web UI's run page shows the same summary."""

from __future__ import annotations

from sqlalchemy import or_

from benchyard.report.counts import category_figures, check_counts
from benchyard.report.flags import attempt_flags, flaky_flags, is_long, long_flag, sorted_flags
from benchyard.report.model import (
    CategoryCounts,
    Durations,
    Failure,
    ReviewFlag,
    RunInfo,
    RunReport,
    Summary,
)
from benchyard.report.passk import repeated_from_tallies
from benchyard.report.stats import ratio, wilson_interval
from benchyard.runner.failures import CLAIMED_KINDS, COUNTED_VERDICTS, FailureKind
from benchyard.store.browse import (
    FLAG_KINDS,
    PERCENTILES,
    RunFigureTallies,
    VerdictGroup,
    figure_tallies,
    flag_condition,
)
from benchyard.store.outcomes import final_failures, scenario_tallies
from benchyard.store.store import Store


def aggregated_report(store: Store, info: RunInfo) -> RunReport:
    """The report of one run (not merged with the runs it re-ran), as report/build.py's fold over
    its attempts makes it."""
    tallies = figure_tallies(store, info.id)
    epochs = max((group.max_epoch for group in tallies.groups), default=0)
    scenarios = scenario_tallies(store, info.id) if epochs > 1 else {}  # else no flaky, no pass@k
    counted = {sid: (t.passed, t.counted) for sid, t in scenarios.items() if t.counted}
    return RunReport(
        run=info,
        summary=summary(tallies),
        categories=category_counts(tallies.groups),
        checks=check_counts({t.check_type: [t.passed, t.total] for t in tallies.checks}),
        failures=[
            Failure(**{**row._asdict(), "cause": row.cause or row.verdict})
            for row in final_failures(store, info.id)
        ],
        flags=sorted_flags(
            _attempt_flags(store, info.id, tallies.median_turns) + flaky_flags(counted)
        ),
        repeated=repeated_from_tallies(
            {sid: t.attempts for sid, t in scenarios.items()},
            {sid: list(pair) for sid, pair in counted.items()},
        ),
        format_metrics=None,
    )


def _attempt_flags(store: Store, run_id: str, median_turns: float) -> list[ReviewFlag]:
    """The `long` flags, then each attempt's own flags, of the attempts that raise any: read
    alone, in scenario and epoch order."""
    kinds = [kind for kind in FLAG_KINDS if kind != "flaky"]
    raising = or_(*(flag_condition(run_id, kind, median_turns) for kind in kinds))
    longs: list[ReviewFlag] = []
    own: list[ReviewFlag] = []
    for attempt in store.stream_attempts(run_id, where=raising):
        if is_long(attempt, median_turns):
            longs.append(long_flag(attempt, median_turns))
        own += attempt_flags(attempt)
    return longs + own


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
