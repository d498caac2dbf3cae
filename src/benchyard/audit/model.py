"""The audit artefact: one JSON document per model (a run), fit to show an auditor or a deploy
gate. Versioned (`schema_version`); its JSON Schema is `docs/audit.schema.json`
(`AuditArtefact.model_json_schema()`, kept in step by a test)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

AUDIT_SCHEMA_VERSION = "2"  # 2: accuracy_rule, accuracy_lenient, root_cause.v1_group_attempts
AccuracyRule = Literal["strict", "lenient"]
FlagKind = Literal["long_turns", "low_confidence", "judge_disagreement"]
FalsePositiveBasis = Literal["root_cause_entities", "negative_scenarios", "none"]


class AuditModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Interval(AuditModel):
    low: float
    high: float
    method: str = Field(description="How it was computed: wilson, t (Student), ...")


class BenchmarkFacts(AuditModel):
    name: str
    version: str
    content_hash: str = Field(description="sha256 over the benchmark's normalised files.")


class AgentFacts(AuditModel):
    name: str
    kind: str
    model: str | None = Field(description="The model behind an openai agent, else None.")
    commit: str | None = Field(description="The agent's git commit (None outside a repository).")
    dirty: bool | None = Field(description="Uncommitted changes in the agent's tree.")
    repo: str | None


class RunFacts(AuditModel):
    id: str
    status: str
    started_at: datetime
    finished_at: datetime | None
    merged_runs: list[str] = Field(
        description="Runs whose attempts make up the figures, oldest first."
    )
    benchyard_version: str


class Cost(AuditModel):
    agent_usd: float | None = Field(
        description="The agent's model calls (None when nothing reported a cost)."
    )
    judge_usd: float | None = Field(description="The judge model's calls, apart from the agent's.")
    total_usd: float | None
    per_task_usd: float | None = Field(description="total_usd / task_count.")
    tokens_in: int
    tokens_out: int


class RootCauseFigures(AuditModel):
    """Pooled over the final attempts graded by a `root_cause` check (docs/sre.md)."""

    attempts: int
    predicted: int = Field(
        description="Root causes the agent named (each entity once per attempt)."
    )
    correct: int = Field(description="Of those, the ones the ground truth accepts.")
    false_positives: int = Field(
        description="predicted - correct: named root causes not in the ground truth."
    )
    root_causes: int = Field(description="Root causes there were to find.")
    found: int
    precision: float | None = Field(description="correct / predicted (micro).")
    recall: float | None = Field(description="found / root_causes (micro).")
    f1: float | None
    mean_f1: float | None = Field(description="Mean of each attempt's F1 (macro).")
    attempts_with_false_positive: int
    unreadable_answers: int = Field(description="Answers that named no readable entity.")
    judge_attempts: int = Field(default=0, description="Attempts also graded by the judge model.")
    judge_disagreements: list[str] = Field(
        default_factory=list,
        description="Scenarios where the judge and the deterministic match disagree.",
    )
    v1_group_attempts: int = Field(
        default=0,
        description="Attempts whose check let ITBench v1 groups and aliases widen the entities "
        "(`v1_groups: true`, opt-in); 0: the entities alone were the truth.",
    )


class FalsePositiveFacts(AuditModel):
    basis: FalsePositiveBasis = Field(
        description="root_cause_entities: false positives / predicted root causes; "
        "negative_scenarios: failed / counted attempts on negative scenarios; none: neither applies."
    )
    false_positives: int
    denominator: int


class NegativeScenarios(AuditModel):
    """The run report's own false-positive rate, over scenarios whose right answer is to find
    nothing (`negative: true`), shown apart so that the two definitions never mix."""

    counted: int
    failed: int
    rate: float | None


class AuditFlag(AuditModel):
    kind: FlagKind
    scenario_id: str
    epoch: int
    attempt_id: str
    detail: str


class Trajectories(AuditModel):
    store: str = Field(description="The store holding them (password hidden).")
    run_id: str
    show: str = Field(description="The command that prints one scenario's attempts and trajectory.")
    api: str = Field(description="The web UI's JSON path of the run (`benchyard serve`).")
    attempts: list[dict[str, str | int]] = Field(
        description="Each final attempt: scenario_id, epoch, attempt_id, verdict."
    )


class AuditArtefact(AuditModel):
    schema_version: str = AUDIT_SCHEMA_VERSION
    generated_at: datetime
    model: str = Field(
        description="What was evaluated: the openai agent's model, else the agent's name."
    )
    agent: AgentFacts
    benchmark: BenchmarkFacts
    run: RunFacts
    task_count: int = Field(description="Distinct scenarios with a final attempt.")
    attempt_count: int
    counted: int = Field(description="Attempts counted in accuracy (errors are not).")
    errors: int
    accuracy_rule: AccuracyRule = Field(
        default="strict",
        description="The rule `accuracy` follows. strict: an attempt graded by a root_cause check "
        "passes only when every root cause it names is accepted by the ground truth and it names "
        "at least one true root cause (a false alarm: names none); lenient: it names every root "
        "cause and at least half of what it names is right (hedging with a wrong entity beside "
        "the right one passes).",
    )
    accuracy: float | None = Field(description="passed / counted, by accuracy_rule.")
    accuracy_ci95: Interval | None
    passed: int = Field(default=0, description="Counted attempts passing by accuracy_rule.")
    accuracy_strict: float | None = Field(
        default=None, description="passed / counted by the strict rule, whatever accuracy_rule."
    )
    accuracy_lenient: float | None = Field(
        default=None,
        description="passed / counted by the lenient rule, shown beside accuracy under its own "
        "name: never the headline unless accuracy_rule is lenient.",
    )
    accuracy_lenient_ci95: Interval | None = None
    passed_lenient: int = Field(default=0, description="Counted attempts passing leniently.")
    avg_turns: float | None = Field(description="Mean turns of counted attempts.")
    avg_turns_ci95: Interval | None
    false_positive_rate: float | None = Field(description="See false_positive_basis.")
    false_positive_rate_ci95: Interval | None
    false_positive_basis: FalsePositiveFacts
    negative_scenarios: NegativeScenarios
    root_cause: RootCauseFigures | None
    cost: Cost
    flags: list[AuditFlag]
    flag_counts: dict[str, int]
    flagged_attempts: int = Field(description="Final attempts with at least one flag.")
    trajectories: Trajectories
