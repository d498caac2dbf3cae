"""Building a RunReport from the store: one run, or a run merged with its reruns."""

from __future__ import annotations

import statistics
from array import array
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from benchyard.report.counts import category_figures, check_counts
from benchyard.report.lineage import lineage
from benchyard.report.model import (
    AgentIdentity,
    BenchmarkIdentity,
    CategoryCounts,
    Durations,
    Failure,
    Resume,
    ReviewFlag,
    RunInfo,
    RunReport,
    Summary,
)
from benchyard.report.stats import percentile, ratio, wilson_interval
from benchyard.runner.failures import CLAIMED_KINDS, COUNTED_VERDICTS
from benchyard.store.records import AttemptRecord, ResumeRecord, RunRecord

if TYPE_CHECKING:
    from benchyard.report.aggregated import StreamedReport
    from benchyard.store.lite import Reader
    from benchyard.store.store import Store

# importers/metrics.py's, kept here as a value so that a report (or a comparison) of a run of
# benchyard's own format does not import the importers (60 ms); a test pins the two.
PROVENANCE_SETTING = "benchmark_provenance"


def final_attempts(store: Store, chain: list[RunRecord]) -> list[AttemptRecord]:
    """Final attempts across a chain of runs (oldest first): a later run's attempt replaces an earlier one."""
    merged: dict[tuple[str, int], AttemptRecord] = {}
    for run in chain:
        for attempt in store.attempts(run.id):
            merged[(attempt.scenario_id, attempt.epoch)] = attempt
    return sorted(merged.values(), key=lambda a: (a.scenario_id, a.epoch))


def build_report(store: Store, run: RunRecord, *, merged: bool = False) -> RunReport:
    """A run's report (with `merged`, over the run and the runs it re-ran, the latest attempt of
    each scenario and epoch winning), with every failure and flag in it."""
    return streamed_report(store, run, merged=merged).whole()


def streamed_report(store: Store, run: RunRecord, *, merged: bool = False) -> StreamedReport:
    """`build_report`'s report, its failures and flags read as they are written where it can be.
    One run's is counted by the database (report/aggregated.py), its failures and flags read
    from the store when asked for; a merged report, one with a format's figures, or a run with
    two final tries of one attempt folds its final attempts one at a time, read from the store in
    chunks and without their outputs when they are not listed, so that its memory does not grow
    with the run, and holds its failures and flags."""
    from benchyard.report.aggregated import StreamedReport
    from benchyard.report.flags import sorted_flags
    from benchyard.report.passk import repeated_from_tallies
    from benchyard.store.queue import Queue

    if not merged and (counted := counted_report(store.reader, run)) is not None:
        return counted
    chain = store.run_chain(run) if merged else [run]
    provenance = run.settings.get(PROVENANCE_SETTING)
    resumes = [_resume(resume) for resume in Queue(store).resumes(run.id)]
    info = _run_info(run, [r.id for r in chain], resumes)
    listed = merged or _has_format(provenance)  # a format's figures read the attempts whole
    attempts = final_attempts(store, chain) if listed else None
    tally = _Tally()
    for attempt in attempts if attempts is not None else store.stream_attempts(run.id):
        tally.add(attempt)
    retried = sum(store.count_superseded(r.id) for r in chain)
    from benchyard.importers.metrics import format_metrics

    report = RunReport(
        run=info,
        summary=tally.summary(retried),
        categories=tally.categories(),
        checks=check_counts(tally.checks),
        failures=tally.failures,
        flags=sorted_flags(tally.flags()),
        repeated=repeated_from_tallies(tally.epochs, tally.counted_by_scenario),
        format_metrics=format_metrics(provenance, attempts) if attempts is not None else None,
    )
    return StreamedReport.of(report)


def counted_report(reader: Reader, run: RunRecord) -> StreamedReport | None:
    """One run's report counted by the database (report/aggregated.py), through any Reader (a
    SQLite store's through sqlite3); None where `streamed_report` folds its final attempts
    instead: a run with a format's figures, or with two final tries of one attempt."""
    from benchyard.report.aggregated import aggregated_report
    from benchyard.store.final_attempts import has_twice_final
    from benchyard.store.run_reads import run_resumes

    if _has_format(run.settings.get(PROVENANCE_SETTING)) or has_twice_final(reader, run.id):
        return None
    resumes = [_resume(resume) for resume in run_resumes(reader, run.id)]
    return aggregated_report(reader, _run_info(run, [run.id], resumes))


def _has_format(provenance: object) -> bool:
    return isinstance(provenance, dict) and isinstance(provenance.get("format"), str)


def _resume(resume: ResumeRecord) -> Resume:
    values = asdict(resume)
    values.pop("run_id")
    return Resume(**values)


def run_info(store: Store, run: RunRecord) -> RunInfo:
    """The report's account of one run: identity, agent, settings, provenance, resumes."""
    from benchyard.store.queue import Queue

    resumes = [_resume(resume) for resume in Queue(store).resumes(run.id)]
    return _run_info(run, [run.id], resumes)


def _run_info(run: RunRecord, chain: list[str], resumes: list[Resume]) -> RunInfo:
    return RunInfo(
        id=run.id,
        status=run.status,
        benchmark=benchmark_identity(run),
        agent=AgentIdentity(
            name=run.agent_name,
            config=run.agent_config,
            commit=run.agent_commit,
            dirty=run.agent_dirty,
            diff_hash=run.agent_diff_hash,
        ),
        settings=run.settings,
        benchyard_version=run.benchyard_version,
        host=run.host,
        started_at=run.started_at,
        finished_at=run.finished_at,
        parent_run_id=run.parent_run_id,
        merged_runs=chain,
        status_reason=run.status_reason,
        rescored_from=run.rescored_from,
        lineage=lineage(run),
        resumes=resumes,
    )


@dataclass
class _Counts:
    """Verdict counts of a group of attempts (a run, a category)."""

    attempts: int = 0
    passed: int = 0
    failed: int = 0
    timeouts: int = 0
    errors: int = 0

    def add(self, verdict: str) -> None:
        self.attempts += 1
        self.passed += verdict == "passed"
        self.failed += verdict == "failed"
        self.timeouts += verdict == "timeout"
        self.errors += verdict == "error"

    @property
    def counted(self) -> int:
        return self.passed + self.failed + self.timeouts


@dataclass
class _Tally:
    """A run's figures folded over its final attempts, one at a time: counts and sums, what each
    scenario and category needs, and only the attempts that a failure or flag names."""

    total: _Counts = field(default_factory=_Counts)
    by_category: dict[str, _Counts] = field(default_factory=lambda: defaultdict(_Counts))
    checks: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    epochs: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    counted_by_scenario: dict[str, list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0])
    )
    sums: Counter[str] = field(default_factory=Counter)
    costs: list[float | None] = field(default_factory=lambda: [None, None])  # agent, judge
    durations: array[float] = field(default_factory=lambda: array("d"))
    extra_turns: array[int] = field(default_factory=lambda: array("q"))  # of counted attempts
    maybe_long: list[AttemptRecord] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    attempt_flags: list[ReviewFlag] = field(default_factory=list)

    def add(self, attempt: AttemptRecord) -> None:
        from benchyard.report.flags import LONG_FACTOR, LONG_FLOOR, attempt_flags, extra_turns

        verdict = attempt.verdict
        self.total.add(verdict)
        self.by_category[attempt.category].add(verdict)
        self.epochs[attempt.scenario_id] += 1
        self.durations.append(attempt.duration_sec)
        self._add_sums(attempt)
        for check in attempt.checks:
            tally = self.checks[check.check_type]
            tally[0] += int(check.passed)
            tally[1] += 1
        if verdict in COUNTED_VERDICTS:
            self._add_counted(attempt)
            extra = extra_turns(attempt)
            self.extra_turns.append(extra)
            if extra > LONG_FACTOR * LONG_FLOOR:  # long whatever the median turns out to be
                self.maybe_long.append(attempt)
        if verdict != "passed":
            self.failures.append(_failure(attempt))
        self.attempt_flags += attempt_flags(attempt)

    def _add_sums(self, attempt: AttemptRecord) -> None:
        self.sums.update(
            tokens_in=attempt.tokens_in,
            tokens_out=attempt.tokens_out,
            judge_tokens_in=attempt.judge_tokens_in,
            judge_tokens_out=attempt.judge_tokens_out,
            hit_max_turns=attempt.hit_max_turns,
            reasoning_truncated=attempt.failure_kind == "reasoning_truncated",
        )
        for index, cost in enumerate((attempt.cost_usd, attempt.judge_cost_usd)):
            if cost is not None:
                self.costs[index] = (self.costs[index] or 0) + cost

    def _add_counted(self, attempt: AttemptRecord) -> None:
        passed = attempt.verdict == "passed"
        scenario = self.counted_by_scenario[attempt.scenario_id]
        scenario[0] += passed
        scenario[1] += 1
        self.sums.update(
            turns=attempt.turns,
            claimed=attempt.verdict == "failed" and attempt.failure_kind in CLAIMED_KINDS,
            negatives=attempt.negative,
            false_positives=attempt.negative and not passed,
        )

    def flags(self) -> list[ReviewFlag]:
        from benchyard.report.flags import flaky_flags, is_long, long_flag

        median = statistics.median(self.extra_turns) if self.extra_turns else 0
        longs = [long_flag(a, median) for a in self.maybe_long if is_long(a, median)]
        scenarios = {sid: (c[0], c[1]) for sid, c in self.counted_by_scenario.items()}
        return longs + self.attempt_flags + flaky_flags(scenarios)

    def summary(self, retried: int) -> Summary:
        total, sums = self.total, self.sums
        counted = total.counted
        durations = sorted(self.durations)
        return Summary(
            task_count=len(self.epochs),
            attempt_count=total.attempts,
            passed=total.passed,
            failed=total.failed,
            timeouts=total.timeouts,
            errors=total.errors,
            counted=counted,
            accuracy=ratio(total.passed, counted),
            accuracy_ci95=wilson_interval(total.passed, counted),
            error_rate=ratio(total.errors, total.attempts),
            accuracy_if_errors_failed=ratio(total.passed, total.attempts),
            claimed_faults=sums["claimed"],
            avg_turns=ratio(sums["turns"], counted),
            false_positive_rate=ratio(sums["false_positives"], sums["negatives"]),
            negative_count=sums["negatives"],
            retried_tries=retried,
            tokens_in=sums["tokens_in"],
            tokens_out=sums["tokens_out"],
            cost_usd=self.costs[0],
            judge_tokens_in=sums["judge_tokens_in"],
            judge_tokens_out=sums["judge_tokens_out"],
            judge_cost_usd=self.costs[1],
            hit_max_turns=sums["hit_max_turns"],
            reasoning_truncated=sums["reasoning_truncated"],
            durations=Durations(
                p50_sec=percentile(durations, 50),
                p90_sec=percentile(durations, 90),
                p99_sec=percentile(durations, 99),
                max_sec=durations[-1] if durations else None,
                total_attempt_sec=sum(self.durations),
            ),
        )

    def categories(self) -> dict[str, CategoryCounts]:
        result = {}
        for category in sorted(self.by_category):
            counts = self.by_category[category]
            result[category] = category_figures(
                counts.passed, counts.counted, counts.errors, counts.timeouts, counts.attempts
            )
        return result


def _failure(attempt: AttemptRecord) -> Failure:
    return Failure(
        scenario_id=attempt.scenario_id,
        category=attempt.category,
        epoch=attempt.epoch,
        verdict=attempt.verdict,
        failure_kind=attempt.failure_kind,
        cause=attempt.cause or attempt.verdict,
        attempt_id=attempt.id,
        run_id=attempt.run_id,
    )


def benchmark_identity(run: RunRecord) -> BenchmarkIdentity:
    """The benchmark a run ran, as its report names it."""
    return BenchmarkIdentity(
        name=run.benchmark_name,
        version=run.benchmark_version,
        hash=run.benchmark_hash,
        provenance=run.settings.get(PROVENANCE_SETTING),
    )
