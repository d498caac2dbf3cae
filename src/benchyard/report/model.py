"""The JSON report: a documented, versioned schema (see docs/report-schema.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "1"


class ReportModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BenchmarkIdentity(ReportModel):
    name: str
    version: str
    hash: str = Field(description="Content hash over the benchmark's normalised files.")


class AgentIdentity(ReportModel):
    name: str
    config: dict[str, Any]
    commit: str | None = Field(description="The agent's git commit, None outside a repository.")
    dirty: bool | None = Field(description="Whether the agent's tree had uncommitted changes.")


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
        description="Infrastructure errors: not the agent's fault, left out of accuracy."
    )
    counted: int = Field(description="passed + failed + timeouts: the denominator of accuracy.")
    accuracy: float | None
    accuracy_ci95: tuple[float, float] | None = Field(description="Wilson score interval, 95%.")
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
    hit_max_turns: int
    durations: Durations


class CategoryCounts(ReportModel):
    passed: int
    counted: int
    errors: int
    timeouts: int
    raw: str = Field(description="passed/counted, e.g. '31/33'.")
    accuracy: float | None


class CheckCounts(ReportModel):
    passed: int
    total: int
    pass_rate: float | None


class Failure(ReportModel):
    scenario_id: str
    category: str
    epoch: int
    verdict: str
    failure_kind: str | None
    cause: str
    attempt_id: str
    run_id: str


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
