"""A run's report from what the database counts: the summary, categories and checks from
GROUP BY aggregates (store/figures.py, the web UI's run page's queries), the failures as plain
rows (store/outcomes.py), the review flags from the attempts that raise them alone
(store/report_rows.py), pass@k from each scenario's tallies. The failures and the flags are read
when they are written (a terminal table reads the first 100 failures, a JSON report writes each
as it is read), so that its memory does not grow with them: a 100,000-attempt run's report holds
no attempt. Every query is SQL text run through a `Reader` (store/lite.py): `benchyard report`
reads a SQLite store through sqlite3, without SQLAlchemy."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from benchyard.report.counts import category_figures, check_counts
from benchyard.report.flags import (
    attempt_flags,
    flag_order,
    flaky_flags,
    is_long,
    long_flag,
    sorted_flags,
)
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
from benchyard.store.figures import PERCENTILES, RunFigureTallies, VerdictGroup, figure_tallies
from benchyard.store.lite import Reader
from benchyard.store.outcomes import final_failures, scenario_tallies
from benchyard.store.report_rows import flagged_attempts

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class StreamedReport:
    """A run's report whose failures and flags are read each time they are asked for: `head` is
    the report with both lists empty; `failures(n)` gives the first n failures (all with None),
    each as the JSON report writes it; `flags()` the flags, in the report's order."""

    head: RunReport
    failure_count: int
    failures: Callable[[int | None], Iterable[JsonObject]]
    flags: Callable[[], Iterable[ReviewFlag]]
    held: RunReport | None = None  # the whole report, when it was built whole

    @classmethod
    def of(cls, report: RunReport) -> StreamedReport:
        """A report built whole, read through the same interface."""
        return cls(
            head=report.model_copy(update={"failures": [], "flags": []}),
            failure_count=len(report.failures),
            failures=lambda limit: (f.model_dump(mode="json") for f in report.failures[:limit]),
            flags=lambda: report.flags,
            held=report,
        )

    def document(self) -> JsonObject:
        """The JSON report, its failures and flags as StreamedLists (report/listing.py's
        write_streamed_json writes them as they are read)."""
        from benchyard.report.listing import StreamedList

        document = self.head.model_dump(mode="json")
        document["failures"] = StreamedList(self.failures(None))
        document["flags"] = StreamedList(flag.model_dump(mode="json") for flag in self.flags())
        return document

    def whole(self) -> RunReport:
        """The report with every failure and flag in it."""
        if self.held is not None:
            return self.held
        failures = [Failure(**failure) for failure in self.failures(None)]
        return self.head.model_copy(update={"failures": failures, "flags": list(self.flags())})


def aggregated_report(reader: Reader, info: RunInfo) -> StreamedReport:
    """The report of one run (not merged with the runs it re-ran), as report/build.py's fold over
    its attempts makes it."""
    tallies = figure_tallies(reader, info.id)
    epochs = max((group.max_epoch for group in tallies.groups), default=0)
    scenarios = scenario_tallies(reader, info.id) if epochs > 1 else {}  # else no flaky, no pass@k
    counted = {sid: (t.passed, t.counted) for sid, t in scenarios.items() if t.counted}
    head = RunReport(
        run=info,
        summary=summary(tallies),
        categories=category_counts(tallies.groups),
        checks=check_counts({t.check_type: [t.passed, t.total] for t in tallies.checks}),
        failures=[],
        flags=[],
        repeated=repeated_from_tallies(
            {sid: t.attempts for sid, t in scenarios.items()},
            {sid: list(pair) for sid, pair in counted.items()},
        ),
        format_metrics=None,
    )
    return StreamedReport(
        head=head,
        failure_count=sum(g.attempts for g in tallies.groups if g.verdict != "passed"),
        failures=lambda limit: _failures(reader, info.id, limit),
        flags=lambda: _flags(reader, info.id, tallies.median_turns, counted),
    )


def _failures(reader: Reader, run_id: str, limit: int | None) -> Iterator[JsonObject]:
    """The run's failures as the JSON report writes them (store/outcomes.py's FailureRow has
    Failure's fields, in its order), read row by row."""
    for row in final_failures(reader, run_id, limit):
        failure = row._asdict()
        failure["cause"] = row.cause or row.verdict
        yield failure


def _flags(
    reader: Reader, run_id: str, median_turns: float, counted: Mapping[str, tuple[int, int]]
) -> Iterator[ReviewFlag]:
    """The run's flags in sorted_flags's order: each flagged attempt's, read in scenario and
    epoch order, merged with the flaky scenarios'."""
    flaky = sorted_flags(flaky_flags(counted))
    return heapq.merge(_attempt_flags(reader, run_id, median_turns), flaky, key=flag_order)


def _attempt_flags(reader: Reader, run_id: str, median_turns: float) -> Iterator[ReviewFlag]:
    """The flags of each attempt that raises any (`long` and its own), in scenario, epoch and
    kind order."""
    for attempt in flagged_attempts(reader, run_id, median_turns):
        longs = [long_flag(attempt, median_turns)] if is_long(attempt, median_turns) else []
        yield from sorted_flags(longs + attempt_flags(attempt))


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
