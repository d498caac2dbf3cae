"""The JSON report: a documented, versioned schema (see docs/report-schema.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1"


class ReportModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BenchmarkIdentity(ReportModel):
    name: str
    version: str
    hash: str = Field(description="Content hash over the benchmark's normalised files.")
    provenance: dict[str, Any] | None = Field(
        default=None,
        description="An imported benchmark's origin: format, format_version, source, "
        "source_sha256, options (docs/importers.md); None for benchyard's own format.",
    )


class AgentIdentity(ReportModel):
    name: str
    config: dict[str, Any]
    commit: str | None = Field(description="The agent's git commit, None outside a repository.")
    dirty: bool | None = Field(description="Whether the agent's tree had uncommitted changes.")
    diff_hash: str | None = Field(
        default=None,
        description="sha256 of the uncommitted diff (`git diff HEAD`) when dirty, else None.",
    )


class Resume(ReportModel):
    at: datetime
    action: str = Field(description="requeued, or failed (the run asked for --on-crash fail).")
    lost_worker: str
    cause: str = Field(description="Why the worker counted as lost: lease expired, process gone.")
    by_worker: str
    kept: int = Field(description="Finished attempts kept.")
    requeued: int = Field(description="Unfinished attempts put back in the queue (or cancelled).")


class RunInfo(ReportModel):
    id: str
    status: str
    benchmark: BenchmarkIdentity
    agent: AgentIdentity
    settings: dict[str, Any]
    benchyard_version: str
    host: str
    started_at: datetime
    finished_at: datetime | None
    parent_run_id: str | None
    merged_runs: list[str] = Field(
        description="Runs whose attempts make up this report, oldest first."
    )
    status_reason: str | None = Field(
        default=None, description="Why the run failed or was cancelled."
    )
    rescored_from: str | None = Field(
        default=None, description="The run whose recorded outputs this one re-graded."
    )
    lineage: list[str] = Field(
        default_factory=list,
        description="What the run was made from: 'rerun of ID', 'rescore of ID', "
        "'imported from FORMAT FILE'.",
    )
    resumes: list[Resume] = Field(
        default_factory=list, description="Each time a lost worker's attempts were taken back."
    )


class Durations(ReportModel):
    p50_sec: float | None
    p90_sec: float | None
    p99_sec: float | None
    max_sec: float | None
    total_attempt_sec: float


class Summary(ReportModel):
    task_count: int = Field(description="Distinct scenarios with a final attempt.")
    attempt_count: int = Field(description="Final attempts (one per scenario and epoch).")
    passed: int
    failed: int
    timeouts: int
    errors: int = Field(
        description="Infrastructure errors benchyard observed itself (not the agent's fault), "
        "left out of accuracy."
    )
    counted: int = Field(description="passed + failed + timeouts: the denominator of accuracy.")
    accuracy: float | None
    accuracy_ci95: tuple[float, float] | None = Field(description="Wilson score interval, 95%.")
    error_rate: float | None = Field(
        default=None, description="errors / attempt_count (None without attempts)."
    )
    accuracy_if_errors_failed: float | None = Field(
        default=None,
        description="passed / attempt_count: the accuracy had every error been a failure.",
    )
    claimed_faults: int = Field(
        default=0,
        description="Failed attempts whose final try ended in a fault only the agent claimed "
        "(exit 75, 126, 127): retried, then counted against it.",
    )
    avg_turns: float | None
    false_positive_rate: float | None = Field(
        description="Failed attempts on negative scenarios over counted attempts on negative scenarios."
    )
    negative_count: int
    retried_tries: int = Field(
        description="Earlier tries superseded by a retry of an infrastructure fault."
    )
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    judge_tokens_in: int = Field(
        default=0, description="The judge model's tokens, apart from the agent's."
    )
    judge_tokens_out: int = 0
    judge_cost_usd: float | None = Field(
        default=None, description="The judge model's cost, apart from the agent's."
    )
    hit_max_turns: int
    reasoning_truncated: int = Field(
        default=0,
        description="Attempts whose answer stayed empty because the token budget went to "
        "reasoning, even after one retry with reasoning lowered (`rerun --recover`).",
    )
    durations: Durations


class CategoryCounts(ReportModel):
    passed: int
    counted: int
    errors: int = Field(description="Final attempts that ended in an error, left out of accuracy.")
    timeouts: int
    attempts: int = Field(default=0, description="Final attempts: counted + errors.")
    raw: str = Field(description="passed/counted, e.g. '31/33'.")
    accuracy: float | None
    accuracy_ci95: tuple[float, float] | None = Field(
        default=None, description="Wilson score interval of accuracy, 95%."
    )


class CheckCounts(ReportModel):
    passed: int
    total: int
    pass_rate: float | None
    pass_rate_ci95: tuple[float, float] | None = Field(
        default=None, description="Wilson score interval of pass_rate, 95%."
    )


class Failure(ReportModel):
    scenario_id: str
    category: str
    epoch: int
    verdict: str
    failure_kind: str | None
    cause: str
    attempt_id: str
    run_id: str


class ReviewFlag(ReportModel):
    kind: Literal["long", "flaky", "near_threshold", "hit_max_turns", "suspicious_patch"]
    scenario_id: str
    epoch: int | None = Field(description="None for a flag on a whole scenario (flaky).")
    attempt_id: str | None
    detail: str


class PassAtK(ReportModel):
    k: int
    pass_at_k: float = Field(description="Mean over scenarios of 1 - C(n-c,k)/C(n,k).")
    pass_hat_k: float = Field(description="Mean over scenarios of C(c,k)/C(n,k): all k pass.")
    scenarios: int = Field(description="Scenarios with at least k counted attempts.")


class ScenarioSuccesses(ReportModel):
    successes: int
    attempts: int = Field(description="Counted attempts (errors left out).")


class RepeatedAttempts(ReportModel):
    epochs: int
    by_k: list[PassAtK]
    scenarios: dict[str, ScenarioSuccesses]


class RunReport(ReportModel):
    schema_version: str = SCHEMA_VERSION
    run: RunInfo
    summary: Summary
    categories: dict[str, CategoryCounts]
    checks: dict[str, CheckCounts] = Field(
        description="Pass rate of each check type over graded attempts."
    )
    failures: list[Failure] = Field(
        description="Every final attempt that did not pass, with its cause."
    )
    flags: list[ReviewFlag] = Field(
        default_factory=list, description="Attempts and scenarios for a human to review."
    )
    repeated: RepeatedAttempts | None = Field(
        default=None, description="pass@k and pass^k with epochs > 1; None with one epoch."
    )
    format_metrics: dict[str, Any] | None = Field(
        default=None,
        description="An imported benchmark's own figures, by its format (IFEval prompt- and "
        "instruction-level accuracy, the GSM8K answer rule, named rewards); see docs/importers.md.",
    )


# ---- comparisons and history (`benchyard compare`, `benchyard history`) -------------------


class RunFigures(ReportModel):
    id: str
    lineage: list[str] = Field(
        default_factory=list,
        description="What the run was made from: 'rerun of ID', 'rescore of ID', "
        "'imported from FORMAT FILE'.",
    )
    merged_runs: list[str] = Field(
        default_factory=list,
        description="The runs whose final attempts make up these figures, oldest first: a rerun "
        "merged with the runs it re-ran.",
    )
    agent: str
    commit: str | None
    dirty: bool | None
    benchmark: BenchmarkIdentity
    started_at: datetime
    status: str
    accuracy: float | None
    accuracy_ci95: tuple[float, float] | None
    accuracy_ci95_method: str = Field(
        default="wilson",
        description="How accuracy_ci95 was computed: 'wilson' (one attempt per scenario: "
        "independent trials) or 'cluster-robust by scenario' (epochs: a scenario's attempts are "
        "not independent, so the interval comes from the spread between scenarios).",
    )
    passed: int
    counted: int
    errors: int = Field(default=0, description="Final attempts left out of accuracy as errors.")
    attempt_count: int = Field(default=0, description="Final attempts: counted + errors.")
    cost_usd: float | None
    avg_turns: float | None
    p50_sec: float | None
    total_attempt_sec: float
    changed_scenarios: list[str] | None = Field(
        default=None,
        description="In history: the scenarios (ids) whose own content hash differs from the run "
        "before's; None for the first run, or when a run's attempts were recorded before "
        "per-scenario hashes (the benchmark version and hash say what changed).",
    )
    partial: bool = Field(
        default=False,
        description="The run covered part of its benchmark: a rerun, filters or a limit "
        "(`scope` says which); its accuracy is not the benchmark's.",
    )
    scope: str = Field(
        default="all scenarios",
        description="What the run covered: 'all scenarios', or its rerun, filters and limit.",
    )


class CategoryDelta(ReportModel):
    baseline_raw: str | None
    raw: str | None
    baseline_accuracy: float | None
    accuracy: float | None
    delta: float | None
    baseline_errors: int | None = None
    errors: int | None = None


class CandidateComparison(ReportModel):
    run: RunFigures
    paired: int = Field(description="(scenario, epoch) pairs counted in both runs.")
    both_passed: int
    both_failed: int
    pass_to_fail: int
    fail_to_pass: int
    accuracy_delta: float | None = Field(
        description="Paired: (fail_to_pass - pass_to_fail) / paired."
    )
    accuracy_delta_ci95: tuple[float, float] | None = Field(
        description="Newcombe's hybrid score interval for a paired difference."
    )
    mcnemar_p: float = Field(description="Exact two-sided McNemar p-value on the discordant pairs.")
    test: str = Field(
        default="exact McNemar",
        description="The test that decides significance: 'exact McNemar' (one attempt per "
        "scenario) or 'cluster-robust paired z-test by scenario' (epochs).",
    )
    test_reason: str = Field(default="", description="Why that test ran.")
    p_value: float = Field(
        default=1.0, description="The two-sided p-value of `test` (mcnemar_p for McNemar)."
    )
    accuracy_delta_ci95_method: str = Field(
        default="newcombe",
        description="'newcombe' (independent pairs) or 'cluster-robust by scenario' (epochs: the "
        "per-scenario sums of differences, sandwich variance with factor k/(k-1)).",
    )
    naive_accuracy_delta_ci95: tuple[float, float] | None = Field(
        default=None,
        description="Newcombe's interval taking every pair as independent, for reference when the "
        "interval is clustered.",
    )
    scenarios_paired: int = Field(default=0, description="Scenarios with a pair counted in both.")
    minimum_detectable_effect: float | None = Field(
        default=None,
        description="The smallest accuracy difference (absolute, 0-1) that `test` would find "
        "with power 0.8 at alpha 0.05 on these pairs: 2.8016 times its standard error (for "
        "McNemar sqrt(pass_to_fail + fail_to_pass) / paired); None when no pair varied.",
    )
    scenario_versions: Literal["per scenario", "whole benchmark"] = Field(
        default="per scenario",
        description="How changed scenarios were told apart: by each attempt's own scenario hash, "
        "or, where a run's attempts were recorded before per-scenario hashes, by the runs' "
        "whole-benchmark hash.",
    )
    changed_scenarios: list[str] = Field(
        default_factory=list,
        description="Scenarios in both runs whose own content hash differs: left out of the pairs "
        "(paired anyway with --allow-version-mismatch: changed_paired).",
    )
    changed_paired: bool = Field(
        default=False, description="The changed scenarios were paired (--allow-version-mismatch)."
    )
    significant_regression: bool = Field(description="A drop with p_value < alpha.")
    significant_improvement: bool
    compared: int = Field(
        default=0, description="(scenario, epoch) pairs with a final attempt in both runs."
    )
    baseline_errors: int = Field(default=0, description="Errors of the baseline in those pairs.")
    errors: int = Field(default=0, description="Errors of this run in those pairs.")
    counted_to_error: int = Field(
        default=0, description="Pairs counted in the baseline that are errors in this run."
    )
    pass_to_error: int = Field(
        default=0, description="Of counted_to_error, those the baseline passed."
    )
    error_to_counted: int = Field(
        default=0, description="Pairs that are errors in the baseline and counted in this run."
    )
    error_rate_delta: float | None = Field(
        default=None, description="(counted_to_error - error_to_counted) / compared."
    )
    error_rate_delta_ci95: tuple[float, float] | None = Field(
        default=None, description="Newcombe's hybrid score interval of error_rate_delta."
    )
    error_p: float = Field(
        default=1.0,
        description="Exact two-sided McNemar p-value of the error rate's change: "
        "counted_to_error against error_to_counted.",
    )
    significant_error_rise: bool = Field(
        default=False, description="More new errors than fewer, with error_p < alpha."
    )
    errors_as_failures_p: float = Field(
        default=1.0,
        description="Exact McNemar p-value with this run's new errors counted as failures: "
        "pass_to_fail + pass_to_error against fail_to_pass.",
    )
    errors_hide_regression: bool = Field(
        default=False,
        description="No significant drop on the pairs counted in both, but a significant one "
        "with this run's new errors counted as failures (errors_as_failures_p < alpha).",
    )
    regression: bool = Field(
        default=False,
        description="What --fail-on-regression fails on: significant_regression, "
        "significant_error_rise or errors_hide_regression.",
    )
    categories: dict[str, CategoryDelta]
    cost_delta_usd: float | None
    avg_turns_delta: float | None
    p50_sec_delta: float | None
    total_attempt_sec_delta: float


class ScenarioRow(ReportModel):
    scenario_id: str
    epoch: int
    category: str
    verdicts: list[str | None] = Field(description="Baseline first, then each candidate.")
    flips: list[Literal["pass_to_fail", "fail_to_pass"] | None] = Field(
        description="Each candidate against the baseline."
    )
    changed: list[bool] = Field(
        default_factory=list,
        description="Each candidate: the scenario's own content hash differs from the baseline's "
        "(its rows are not paired unless --allow-version-mismatch).",
    )


class Comparison(ReportModel):
    schema_version: str = SCHEMA_VERSION
    alpha: float
    baseline: RunFigures
    candidates: list[CandidateComparison]
    scenarios: list[ScenarioRow] = Field(
        description="Pass-to-fail flips first, then fail-to-pass, then the rest; the unchanged "
        "rows only when unchanged_listed."
    )
    unchanged: int = Field(
        default=0,
        description="Rows with the same verdict in every run (listed in scenarios only when "
        "unchanged_listed).",
    )
    unchanged_listed: bool = Field(
        default=True,
        description="Whether scenarios lists the unchanged rows too (always in compare's JSON).",
    )
