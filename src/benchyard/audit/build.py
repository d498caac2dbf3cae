"""Building the audit artefact of a run from the store."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from benchyard.audit.model import (
    AccuracyRule,
    AgentFacts,
    AuditArtefact,
    AuditFlag,
    BenchmarkFacts,
    Cost,
    FalsePositiveFacts,
    FlagKind,
    Interval,
    NegativeScenarios,
    RootCauseFigures,
    RunFacts,
    Trajectories,
)
from benchyard.report.stats import wilson_interval
from benchyard.runner.failures import COUNTED_VERDICTS
from benchyard.store.lite import shown_url
from benchyard.store.records import AttemptRecord, CheckRecord, RunRecord
from benchyard.store.store import Store

LONG_FACTOR = 2.0  # turns over this many times the median of the run's counted attempts
ROOT_CAUSE = "root_cause"
# Student's t, two-sided 95%, by degrees of freedom (1..30); beyond, the normal 1.96.
T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_975(df: int) -> float:
    return T_975[df - 1] if 1 <= df <= len(T_975) else 1.959963984540054


def mean_interval(values: Sequence[float]) -> Interval | None:
    """Student's t interval of a mean (None with fewer than two values)."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    half = t_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return Interval(low=round(max(0.0, mean - half), 9), high=round(mean + half, 9), method="t")


def _wilson(successes: int, trials: int) -> Interval | None:
    found = wilson_interval(successes, trials)
    if found is None:
        return None
    return Interval(low=round(found[0], 9), high=round(found[1], 9), method="wilson")


def build_audit(
    store: Store, run: RunRecord, *, merged: bool = False, rule: AccuracyRule = "strict"
) -> AuditArtefact:
    """The run's audit artefact; `accuracy` follows `rule` (strict by default), and the other
    rule's figure stands beside it under its own name."""
    from benchyard.report.build import final_attempts

    chain = store.run_chain(run) if merged else [run]
    attempts = final_attempts(store, chain)
    counted = [a for a in attempts if a.verdict in COUNTED_VERDICTS]
    strict = sum(1 for a in counted if passes_strictly(a))
    lenient = sum(1 for a in counted if passes_leniently(a))
    passed = strict if rule == "strict" else lenient
    turns = [float(a.turns) for a in counted]
    root = root_cause_figures(counted)
    negatives = [a for a in counted if a.negative]
    negative_failed = sum(1 for a in negatives if a.verdict != "passed")
    if root is not None:
        basis = FalsePositiveFacts(
            basis="root_cause_entities",
            false_positives=root.false_positives,
            denominator=root.predicted,
        )
    elif negatives:
        basis = FalsePositiveFacts(
            basis="negative_scenarios", false_positives=negative_failed, denominator=len(negatives)
        )
    else:
        basis = FalsePositiveFacts(basis="none", false_positives=0, denominator=0)
    flags = audit_flags(counted)
    tasks = len({a.scenario_id for a in attempts})
    return AuditArtefact(
        generated_at=datetime.now(UTC),
        model=model_name(run),
        agent=AgentFacts(
            name=run.agent_name,
            kind=str(run.agent_config.get("kind", "command")),
            model=_model_of(run),
            commit=run.agent_commit,
            dirty=run.agent_dirty,
            repo=run.agent_repo,
        ),
        benchmark=BenchmarkFacts(
            name=run.benchmark_name, version=run.benchmark_version, content_hash=run.benchmark_hash
        ),
        run=RunFacts(
            id=run.id,
            status=run.status,
            started_at=run.started_at,
            finished_at=run.finished_at,
            merged_runs=[r.id for r in chain],
            benchyard_version=run.benchyard_version,
        ),
        task_count=tasks,
        attempt_count=len(attempts),
        counted=len(counted),
        errors=sum(1 for a in attempts if a.verdict == "error"),
        accuracy_rule=rule,
        accuracy=passed / len(counted) if counted else None,
        accuracy_ci95=_wilson(passed, len(counted)),
        passed=passed,
        accuracy_strict=strict / len(counted) if counted else None,
        accuracy_lenient=lenient / len(counted) if counted else None,
        accuracy_lenient_ci95=_wilson(lenient, len(counted)),
        passed_lenient=lenient,
        avg_turns=statistics.fmean(turns) if turns else None,
        avg_turns_ci95=mean_interval(turns),
        false_positive_rate=basis.false_positives / basis.denominator
        if basis.denominator
        else None,
        false_positive_rate_ci95=_wilson(basis.false_positives, basis.denominator),
        false_positive_basis=basis,
        negative_scenarios=NegativeScenarios(
            counted=len(negatives),
            failed=negative_failed,
            rate=negative_failed / len(negatives) if negatives else None,
        ),
        root_cause=root,
        cost=_cost(attempts, tasks),
        flags=flags,
        flag_counts={
            kind: sum(1 for f in flags if f.kind == kind)
            for kind in ("long_turns", "low_confidence", "judge_disagreement")
        },
        flagged_attempts=len({f.attempt_id for f in flags}),
        trajectories=Trajectories(
            store=shown_url(store.url),
            run_id=run.id,
            show=f"benchyard show {run.id} SCENARIO",
            api=f"/api/runs/{run.id}",
            attempts=[
                {
                    "scenario_id": a.scenario_id,
                    "epoch": a.epoch,
                    "attempt_id": a.id,
                    "verdict": a.verdict,
                }
                for a in attempts
            ],
        ),
    )


def _model_of(run: RunRecord) -> str | None:
    model = run.agent_config.get("model")
    return str(model) if run.agent_config.get("kind") == "openai" and model else None


def model_name(run: RunRecord) -> str:
    return _model_of(run) or run.agent_name


def root_cause_details(attempt: AttemptRecord) -> dict[str, Any] | None:
    check: CheckRecord | None = next(
        (c for c in attempt.checks if c.check_type == ROOT_CAUSE and c.details), None
    )
    return check.details if check is not None else None


def _deciding(details: dict[str, Any]) -> dict[str, Any]:
    """The figures that decided the check: the judge's with `judge: only`, else the match's."""
    judge = details.get("judge")
    return judge if details.get("mode") == "judge" and isinstance(judge, dict) else details


def strictly_right(details: dict[str, Any]) -> bool:
    """Every named root cause accepted (precision 1; a false alarm: nothing named) and at least
    one true root cause named (recall above 0; 1 for a false alarm)."""
    figures = _deciding(details)
    return float(figures.get("precision", 0.0)) >= 1.0 and float(figures.get("recall", 0.0)) > 0


def leniently_right(details: dict[str, Any]) -> bool:
    """Every root cause named, at least half of the named ones right (the check's old default,
    as ITBench's precision of 0.5 reads): naming a wrong entity beside the right one passes."""
    figures = _deciding(details)
    if "lenient_passed" in figures:
        return bool(figures["lenient_passed"])
    return float(figures.get("recall", 0.0)) >= 1.0 and float(figures.get("precision", 0.0)) >= 0.5


def passes_strictly(attempt: AttemptRecord) -> bool:
    """The attempt passed, and its root causes (if a root_cause check graded it) are strictly
    right, whatever thresholds the check had when it was graded."""
    details = root_cause_details(attempt)
    return attempt.verdict == "passed" and (details is None or strictly_right(details))


def passes_leniently(attempt: AttemptRecord) -> bool:
    """The attempt passed, or failed only on its root_cause check, which the lenient rule passes."""
    if attempt.verdict == "passed":
        return True
    details = root_cause_details(attempt)
    if details is None or attempt.verdict != "failed" or not leniently_right(details):
        return False
    others = [c for c in attempt.checks if c.check_type != ROOT_CAUSE and c.weight > 0]
    return all(check.passed for check in others)


def root_cause_figures(counted: Sequence[AttemptRecord]) -> RootCauseFigures | None:
    graded = [(a, d) for a in counted if (d := root_cause_details(a)) is not None]
    if not graded:
        return None
    total = {
        key: sum(int(d.get(key, 0)) for _, d in graded)
        for key in ("predicted", "correct", "false_positives", "root_causes", "found")
    }
    precision = total["correct"] / total["predicted"] if total["predicted"] else None
    recall = total["found"] / total["root_causes"] if total["root_causes"] else None
    f1 = (
        2 * precision * recall / (precision + recall)
        if precision and recall
        else (0.0 if precision is not None and recall is not None else None)
    )
    judged = [(a, d) for a, d in graded if isinstance(d.get("judge"), dict)]
    return RootCauseFigures(
        attempts=len(graded),
        predicted=total["predicted"],
        correct=total["correct"],
        false_positives=total["false_positives"],
        root_causes=total["root_causes"],
        found=total["found"],
        precision=precision,
        recall=recall,
        f1=f1,
        mean_f1=statistics.fmean(float(d.get("f1", 0.0)) for _, d in graded),
        attempts_with_false_positive=sum(
            1 for _, d in graded if int(d.get("false_positives", 0)) > 0
        ),
        unreadable_answers=sum(1 for _, d in graded if d.get("unreadable")),
        judge_attempts=len(judged),
        judge_disagreements=sorted(
            {f"{a.scenario_id}#{a.epoch}" for a, d in judged if d.get("disagreement")}
        ),
        v1_group_attempts=sum(1 for _, d in graded if d.get("v1_groups")),
    )


def audit_flags(counted: Sequence[AttemptRecord]) -> list[AuditFlag]:
    """Attempts for a human to look at: turns over twice the median, a stated confidence below the
    check's `low_confidence`, and the judge disagreeing with the deterministic match."""
    flags = []
    median = statistics.median(a.turns for a in counted) if counted else 0
    for attempt in counted:
        if median and attempt.turns > LONG_FACTOR * median:
            flags.append(
                _flag(
                    "long_turns",
                    attempt,
                    f"{attempt.turns} turns, over {LONG_FACTOR:g}x the median {median:g}",
                )
            )
        details = root_cause_details(attempt)
        if details is None:
            continue
        if details.get("low_confidence"):
            flags.append(
                _flag("low_confidence", attempt, f"stated confidence {details.get('confidence')}")
            )
        if details.get("disagreement"):
            judge = details.get("judge") or {}
            flags.append(
                _flag(
                    "judge_disagreement",
                    attempt,
                    f"deterministic {_verdict(details.get('passed'))}, "
                    f"judge {_verdict(judge.get('passed'))}",
                )
            )
    return sorted(flags, key=lambda f: (f.scenario_id, f.epoch, f.kind))


def _verdict(passed: object) -> str:
    return "pass" if passed else "fail"


def _flag(kind: FlagKind, attempt: AttemptRecord, detail: str) -> AuditFlag:
    return AuditFlag(
        kind=kind,
        scenario_id=attempt.scenario_id,
        epoch=attempt.epoch,
        attempt_id=attempt.id,
        detail=detail,
    )


def _cost(attempts: Sequence[AttemptRecord], tasks: int) -> Cost:
    agent = [a.cost_usd for a in attempts if a.cost_usd is not None]
    judge = [a.judge_cost_usd for a in attempts if a.judge_cost_usd is not None]
    agent_usd = sum(agent) if agent else None
    judge_usd = sum(judge) if judge else None
    total = (
        None if agent_usd is None and judge_usd is None else (agent_usd or 0.0) + (judge_usd or 0.0)
    )
    return Cost(
        agent_usd=agent_usd,
        judge_usd=judge_usd,
        total_usd=total,
        per_task_usd=total / tasks if total is not None and tasks else None,
        tokens_in=sum(a.tokens_in for a in attempts),
        tokens_out=sum(a.tokens_out for a in attempts),
    )
