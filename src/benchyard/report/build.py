"""Building a RunReport from the store: one run, or a run merged with its reruns."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict

from benchyard.importers.metrics import PROVENANCE_SETTING, format_metrics
from benchyard.report.model import (
    AgentIdentity,
    BenchmarkIdentity,
    CategoryCounts,
    CheckCounts,
    Durations,
    Failure,
    Resume,
    RunInfo,
    RunReport,
    Summary,
)
from benchyard.report.stats import percentile, wilson_interval
from benchyard.runner.failures import CLAIMED_KINDS, COUNTED_VERDICTS
from benchyard.store.records import AttemptRecord, ResumeRecord, RunRecord
from benchyard.store.store import Store


def final_attempts(store: Store, chain: list[RunRecord]) -> list[AttemptRecord]:
    """Final attempts across a chain of runs (oldest first): a later run's attempt replaces an earlier one."""
    merged: dict[tuple[str, int], AttemptRecord] = {}
    for run in chain:
        for attempt in store.attempts(run.id):
            merged[(attempt.scenario_id, attempt.epoch)] = attempt
    return sorted(merged.values(), key=lambda a: (a.scenario_id, a.epoch))


def build_report(store: Store, run: RunRecord, *, merged: bool = False) -> RunReport:
    from benchyard.report.flags import review_flags
    from benchyard.report.passk import repeated_attempts
    from benchyard.store.queue import Queue

    chain = store.run_chain(run) if merged else [run]
    attempts = final_attempts(store, chain)
    retried = sum(store.count_superseded(r.id) for r in chain)
    resumes = [_resume(resume) for resume in Queue(store).resumes(run.id)]
    return RunReport(
        run=_run_info(run, [r.id for r in chain], resumes),
        summary=summarise(attempts, retried),
        categories=_categories(attempts),
        checks=_checks(attempts),
        failures=[_failure(a) for a in attempts if a.verdict != "passed"],
        flags=review_flags(attempts),
        repeated=repeated_attempts(attempts),
        format_metrics=format_metrics(run.settings.get(PROVENANCE_SETTING), attempts),
    )


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
        benchmark=BenchmarkIdentity(
            name=run.benchmark_name,
            version=run.benchmark_version,
            hash=run.benchmark_hash,
            provenance=run.settings.get(PROVENANCE_SETTING),
        ),
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
        resumes=resumes,
    )


def summarise(attempts: list[AttemptRecord], retried: int = 0) -> Summary:
    counted = [a for a in attempts if a.verdict in COUNTED_VERDICTS]
    passed = sum(1 for a in counted if a.verdict == "passed")
    errors = sum(1 for a in attempts if a.verdict == "error")
    negatives = [a for a in counted if a.negative]
    durations = [a.duration_sec for a in attempts]
    costs = [a.cost_usd for a in attempts if a.cost_usd is not None]
    judge_costs = [a.judge_cost_usd for a in attempts if a.judge_cost_usd is not None]
    return Summary(
        task_count=len({a.scenario_id for a in attempts}),
        attempt_count=len(attempts),
        passed=passed,
        failed=sum(1 for a in counted if a.verdict == "failed"),
        timeouts=sum(1 for a in counted if a.verdict == "timeout"),
        errors=errors,
        counted=len(counted),
        accuracy=_ratio(passed, len(counted)),
        accuracy_ci95=wilson_interval(passed, len(counted)),
        error_rate=_ratio(errors, len(attempts)),
        accuracy_if_errors_failed=_ratio(passed, len(attempts)),
        claimed_faults=sum(
            1 for a in counted if a.verdict == "failed" and a.failure_kind in CLAIMED_KINDS
        ),
        avg_turns=_ratio(sum(a.turns for a in counted), len(counted)),
        false_positive_rate=_ratio(
            sum(1 for a in negatives if a.verdict != "passed"), len(negatives)
        ),
        negative_count=len(negatives),
        retried_tries=retried,
        tokens_in=sum(a.tokens_in for a in attempts),
        tokens_out=sum(a.tokens_out for a in attempts),
        cost_usd=sum(costs) if costs else None,
        judge_tokens_in=sum(a.judge_tokens_in for a in attempts),
        judge_tokens_out=sum(a.judge_tokens_out for a in attempts),
        judge_cost_usd=sum(judge_costs) if judge_costs else None,
        hit_max_turns=sum(1 for a in attempts if a.hit_max_turns),
        reasoning_truncated=sum(1 for a in attempts if a.failure_kind == "reasoning_truncated"),
        durations=Durations(
            p50_sec=percentile(durations, 50),
            p90_sec=percentile(durations, 90),
            p99_sec=percentile(durations, 99),
            max_sec=max(durations) if durations else None,
            total_attempt_sec=sum(durations),
        ),
    )


def _ratio(numerator: float, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _categories(attempts: Iterable[AttemptRecord]) -> dict[str, CategoryCounts]:
    grouped: dict[str, list[AttemptRecord]] = defaultdict(list)
    for attempt in attempts:
        grouped[attempt.category].append(attempt)
    result = {}
    for category in sorted(grouped):
        members = grouped[category]
        counted = [a for a in members if a.verdict in COUNTED_VERDICTS]
        passed = sum(1 for a in counted if a.verdict == "passed")
        result[category] = CategoryCounts(
            passed=passed,
            counted=len(counted),
            errors=sum(1 for a in members if a.verdict == "error"),
            timeouts=sum(1 for a in members if a.verdict == "timeout"),
            attempts=len(members),
            raw=f"{passed}/{len(counted)}",
            accuracy=_ratio(passed, len(counted)),
            accuracy_ci95=wilson_interval(passed, len(counted)),
        )
    return result


def _checks(attempts: Iterable[AttemptRecord]) -> dict[str, CheckCounts]:
    tallies: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for attempt in attempts:
        for check in attempt.checks:
            tally = tallies[check.check_type]
            tally[0] += int(check.passed)
            tally[1] += 1
    return {
        name: CheckCounts(
            passed=p, total=t, pass_rate=_ratio(p, t), pass_rate_ci95=wilson_interval(p, t)
        )
        for name, (p, t) in sorted(tallies.items())
    }


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
