"""Plain records passed between the runner, the store and the reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from benchyard.runner.trajectory import Event

VERDICTS = ("passed", "failed", "error", "timeout")


@dataclass
class CheckRecord:
    position: int
    check_type: str
    label: str
    passed: bool
    score: float
    weight: float
    reason: str
    threshold: float | None = None  # the check's own pass threshold on its score, if any
    details: dict[str, Any] | None = None  # a check's structured figures (root_cause: P/R/F1)


@dataclass
class RunRecord:
    id: str
    status: str  # queued | running | finished | interrupted | failed | cancelled
    benchmark_name: str
    benchmark_version: str
    benchmark_hash: str
    benchmark_path: str
    agent_name: str
    agent_config: dict[str, Any]
    settings: dict[str, Any]
    benchyard_version: str
    host: str
    started_at: datetime
    planned_attempts: int
    agent_commit: str | None = None
    agent_dirty: bool | None = None
    agent_diff_hash: str | None = None  # sha256 of `git diff HEAD` when dirty
    agent_repo: str | None = None
    finished_at: datetime | None = None
    parent_run_id: str | None = None
    status_reason: str | None = None  # why the run failed or was cancelled
    rescored_from: str | None = None  # the run whose recorded outputs this one re-graded
    kind: str = "benchmark"  # benchmark | speed (`benchyard speed`: samples, no attempts)


@dataclass
class AttemptRecord:
    id: str
    run_id: str
    scenario_id: str
    category: str
    epoch: int
    try_number: int
    verdict: str
    score: float
    started_at: datetime
    finished_at: datetime
    duration_sec: float
    negative: bool = False
    superseded: bool = False
    cause: str | None = None
    failure_kind: str | None = None
    answer: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    stdout_dropped_bytes: int = 0
    stderr_dropped_bytes: int = 0
    turns: int = 0
    user_turns: int = 1  # the user turns the stimulus scripted (a conversation's, or 1)
    hit_max_turns: bool = False  # the agent wanted another turn past max_turns
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    judge_tokens_in: int = 0
    judge_tokens_out: int = 0
    judge_cost_usd: float | None = None
    checks: list[CheckRecord] = field(default_factory=list)
    trajectory: list[Event] | None = None  # None when not loaded
    patch: str | None = None  # the agent's change to its workdir, as a unified diff
    answers: list[str] | None = None  # every turn's answer when there are several (rescore)
    threshold: float | None = None  # the scenario's pass threshold on the score, if any
    node: str | None = None  # the machine (and Ray node) the try ran on
    # the scenario's own content hash when it ran (spec/hashing.py); None before migration 0015
    scenario_hash: str | None = None


@dataclass(frozen=True)
class ResumeRecord:
    """A crashed worker's claims on a run taken back: re-queued, or the run failed (`--on-crash fail`)."""

    run_id: str
    at: datetime
    action: str  # requeued | failed
    lost_worker: str
    cause: str
    by_worker: str
    kept: int  # finished attempts kept
    requeued: int  # unfinished attempts put back in the queue (or cancelled, when failed)
