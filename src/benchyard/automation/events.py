"""The events webhooks carry and their payloads (docs/automation.md#payloads).

- `run.finished`: a run's last attempt was written (by `benchyard worker` or an inline `run`);
- `run.regression`: that run is a regression, by the test `compare --fail-on-regression` uses,
  against the previous run of its schedule (unscheduled: the previous finished run of the same
  benchmark, agent and scope; automation/after_run.py);
- `gate.decision`: `benchyard gate` decided (automation/announce.py `announce_gate`);
- `ping`: `benchyard webhooks test NAME`.

Every payload has `event`, `delivery`, `webhook` and `sent_at`, then the event's fields, with
`links` into the web UI (`web_url` of the webhook)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from benchyard.report.model import CandidateComparison, Comparison, RunReport
from benchyard.report.render import shorten
from benchyard.store.records import RunRecord

RUN_FINISHED = "run.finished"
RUN_REGRESSION = "run.regression"
GATE_DECISION = "gate.decision"
PING = "ping"
MAX_LISTED = 20  # failures and flips listed in a payload; the counts are always whole

Payload = Callable[[str], dict[str, Any]]


def run_fields(run: RunRecord, report: RunReport, schedule_id: str | None) -> dict[str, Any]:
    summary = report.summary
    return {
        "run": {
            "id": run.id,
            "status": run.status,
            "status_reason": run.status_reason,
            "benchmark": {
                "name": run.benchmark_name,
                "version": run.benchmark_version,
                "hash": run.benchmark_hash,
            },
            "agent": {"name": run.agent_name, "commit": run.agent_commit, "dirty": run.agent_dirty},
            "started_at": run.started_at.isoformat(),
            "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            "schedule": schedule_id,
        },
        "summary": {
            "accuracy": summary.accuracy,
            "accuracy_ci95": summary.accuracy_ci95,
            "passed": summary.passed,
            "failed": summary.failed,
            "timeouts": summary.timeouts,
            "errors": summary.errors,
            "counted": summary.counted,
            "task_count": summary.task_count,
            "attempt_count": summary.attempt_count,
            "error_rate": summary.error_rate,
            "avg_turns": summary.avg_turns,
            "cost_usd": summary.cost_usd,
        },
        "failures_total": len(report.failures),
        "failures": [
            {
                "scenario_id": failure.scenario_id,
                "epoch": failure.epoch,
                "verdict": failure.verdict,
                "failure_kind": failure.failure_kind,
                "cause": shorten(failure.cause),
            }
            for failure in report.failures[:MAX_LISTED]
        ],
    }


def comparison_fields(comparison: Comparison) -> dict[str, Any]:
    from benchyard.report.compare_render import verdict_line

    candidate: CandidateComparison = comparison.candidates[0]
    flips = [row for row in comparison.scenarios if row.flips and row.flips[0] == "pass_to_fail"]
    return {
        "baseline_run": comparison.baseline.id,
        "headline": verdict_line(candidate, comparison.alpha),
        "regression": candidate.regression,
        "alpha": comparison.alpha,
        "accuracy_delta": candidate.accuracy_delta,
        "accuracy_delta_ci95": candidate.accuracy_delta_ci95,
        "mcnemar_p": candidate.mcnemar_p,
        "pass_to_fail": candidate.pass_to_fail,
        "fail_to_pass": candidate.fail_to_pass,
        "error_rate_delta": candidate.error_rate_delta,
        "error_p": candidate.error_p,
        "pass_to_fail_scenarios": [f"{row.scenario_id}#{row.epoch}" for row in flips][:MAX_LISTED],
    }


def run_payload(
    run: RunRecord,
    report: RunReport,
    comparison: Comparison | None,
    schedule_id: str | None,
) -> Payload:
    """The payload of `run.finished` and `run.regression`, with links built per webhook."""
    fields = run_fields(run, report, schedule_id)
    compared = comparison_fields(comparison) if comparison is not None else None

    def build(web: str) -> dict[str, Any]:
        links = {"run": f"{web}/runs/{run.id}", "report": f"{web}/api/runs/{run.id}/report"}
        if compared is not None:
            links["compare"] = f"{web}/compare?run={compared['baseline_run']}&run={run.id}"
        return {**fields, "comparison": compared, "links": links}

    return build


def gate_payload(run: RunRecord, decision: Mapping[str, Any]) -> Payload:
    """The payload of `gate.decision`: `decision` is the gate's decision as JSON (its
    `decision`, `exit_code`, `summary`, `reasons`, `policy`, `policy_sha256`, `figures`)."""
    fields = {
        key: decision.get(key)
        for key in ("decision", "exit_code", "summary", "reasons", "figures")
        if key in decision
    }
    policy = {"path": decision.get("policy"), "sha256": decision.get("policy_sha256")}

    def build(web: str) -> dict[str, Any]:
        return {
            "run": {
                "id": run.id,
                "benchmark": {"name": run.benchmark_name, "version": run.benchmark_version},
                "agent": {"name": run.agent_name, "commit": run.agent_commit},
            },
            **fields,
            "policy": policy,
            "links": {"run": f"{web}/runs/{run.id}", "report": f"{web}/api/runs/{run.id}/report"},
        }

    return build


def ping_payload(name: str) -> Payload:
    def build(web: str) -> dict[str, Any]:
        return {"message": f"a test delivery of webhook '{name}'", "links": {"runs": f"{web}/runs"}}

    return build
