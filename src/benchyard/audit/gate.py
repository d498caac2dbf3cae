"""The deploy gate: a decision (`no-deploy`, `human-in-the-loop`, `canary`, `full`) from a
policy's thresholds over a run's audit artefact, with the reasons, and an exit status per
decision for CI.

```yaml
# policy.yaml
min_tasks: 20                        # fewer graded tasks: no-deploy, whatever the figures
levels:                              # tried from full down; the first whose rules all hold wins
  full:
    min_accuracy_lower_bound: 0.90   # the lower end of accuracy's 95% interval
    max_false_positive_rate: 0.05
    max_avg_turns: 15
    max_cost_per_task_usd: 0.50
    max_flagged_share: 0.05
  canary:
    min_accuracy_lower_bound: 0.75
    max_false_positive_rate: 0.15
  human-in-the-loop:
    min_accuracy_lower_bound: 0.50
```
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchyard.audit.model import AuditArtefact
from benchyard.errors import BenchyardError
from benchyard.spec.problems import Problem
from benchyard.spec.source_files import Located, SpecSyntaxError, read_yaml

DecisionName = Literal["full", "canary", "human-in-the-loop", "no-deploy"]
LevelName = Literal["full", "canary", "human-in-the-loop"]
LEVELS: tuple[LevelName, ...] = ("full", "canary", "human-in-the-loop")
EXIT_CODES: dict[str, int] = {"full": 0, "canary": 10, "human-in-the-loop": 11, "no-deploy": 12}
MAX_POLICY_BYTES = 1024 * 1024


class PolicyInvalid(BenchyardError):
    """A policy file with problems; each names the file, the line and the field."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(map(str, problems)))


class LevelRules(BaseModel):
    """The thresholds a run must meet for one decision; a rule left out is not checked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_accuracy_lower_bound: float | None = Field(default=None, ge=0, le=1)
    min_accuracy: float | None = Field(default=None, ge=0, le=1)
    max_false_positive_rate: float | None = Field(default=None, ge=0, le=1)
    max_false_positive_rate_upper_bound: float | None = Field(default=None, ge=0, le=1)
    max_avg_turns: float | None = Field(default=None, gt=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    max_cost_per_task_usd: float | None = Field(default=None, ge=0)
    max_flagged_share: float | None = Field(default=None, ge=0, le=1)
    max_flags: int | None = Field(default=None, ge=0)
    max_error_rate: float | None = Field(default=None, ge=0, le=1)


class GatePolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    min_tasks: int = Field(default=1, ge=1, description="Fewer graded tasks: no-deploy.")
    levels: dict[LevelName, LevelRules] = Field(min_length=1)


@dataclass(frozen=True)
class LoadedPolicy:
    policy: GatePolicy
    path: Path
    sha256: str


class Reason(BaseModel):
    model_config = ConfigDict(extra="forbid")

    level: str
    rule: str
    required: float | int
    actual: float | int | None
    met: bool


DECISION_SCHEMA_VERSION = "1"


class Decision(BaseModel):
    """What `benchyard gate` prints (its schema: report/schemas/gate.schema.json)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = Field(
        default=DECISION_SCHEMA_VERSION,
        description="Changes when a field is removed or changes meaning (not when one is added).",
    )
    decision: DecisionName
    exit_code: int
    run_id: str
    model: str
    benchmark: str
    policy: str
    policy_sha256: str
    summary: str
    reasons: list[Reason] = Field(description="Every rule checked, level by level, met or not.")
    figures: dict[str, float | int | None]


def load_policy(path: Path) -> LoadedPolicy:
    """Read and validate a policy; every problem is reported with its file, line and field."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise PolicyInvalid(
            [Problem(str(path), None, "", f"cannot read: {error.strerror or error}")]
        ) from None
    if size > MAX_POLICY_BYTES:
        raise PolicyInvalid([Problem(str(path), None, "", f"larger than {MAX_POLICY_BYTES} bytes")])
    try:
        located = read_yaml(path)
    except SpecSyntaxError as error:
        raise PolicyInvalid([Problem(str(path), error.line, "", error.message)]) from None
    except (OSError, UnicodeDecodeError) as error:
        raise PolicyInvalid([Problem(str(path), None, "", f"cannot read: {error}")]) from None
    if not isinstance(located.data, dict):
        raise PolicyInvalid(
            [Problem(str(path), located.line, "", "expected a mapping with `levels:`")]
        )
    try:
        policy = GatePolicy.model_validate(located.data)
    except ValidationError as error:
        raise PolicyInvalid(_problems(path, located, error)) from None
    return LoadedPolicy(policy, path, hashlib.sha256(path.read_bytes()).hexdigest())


def _problems(path: Path, located: Located, error: ValidationError) -> list[Problem]:
    problems = []
    for item in error.errors():
        loc = tuple(
            part
            for part in item["loc"]
            if not (
                isinstance(part, str)
                and (part.startswith(("literal[", "function-")) or part == "[key]")
            )
        )
        field = ""
        for part in loc:
            field += f"[{part}]" if isinstance(part, int) else (f".{part}" if field else str(part))
        if item["type"] == "extra_forbidden":
            message = "unknown field"
            if len(loc) >= 3 and loc[0] == "levels":
                message += f" (rules: {', '.join(LevelRules.model_fields)})"
            elif len(loc) == 1:
                message += " (fields: min_tasks, levels)"
        elif item["type"] == "literal_error" and loc[:1] == ("levels",):
            message = f"unknown level (levels: {', '.join(LEVELS)}; no-deploy is what is left)"
        elif item["type"] == "missing":
            message = "required field is missing"
        else:
            message = f"{item['msg']}, found {item.get('input')!r}"
        problems.append(Problem(str(path), located.line_of(loc), field, message))
    return problems


def figures_of(audit: AuditArtefact) -> dict[str, float | int | None]:
    flagged_share = audit.flagged_attempts / audit.counted if audit.counted else None
    return {
        "task_count": audit.task_count,
        "accuracy": audit.accuracy,
        "accuracy_lower_bound": audit.accuracy_ci95.low if audit.accuracy_ci95 else None,
        # shown, never gated on: the rules read `accuracy`, strict unless the audit says otherwise
        "accuracy_lenient": audit.accuracy_lenient,
        "false_positive_rate": audit.false_positive_rate,
        "false_positive_rate_upper_bound": audit.false_positive_rate_ci95.high
        if audit.false_positive_rate_ci95
        else None,
        "avg_turns": audit.avg_turns,
        "cost_usd": audit.cost.total_usd,
        "cost_per_task_usd": audit.cost.per_task_usd,
        "flags": audit.flagged_attempts,
        "flagged_share": flagged_share,
        "error_rate": audit.errors / audit.attempt_count if audit.attempt_count else None,
    }


RULES: dict[str, tuple[str, str]] = {
    # rule -> (figure, "min" | "max")
    "min_accuracy_lower_bound": ("accuracy_lower_bound", "min"),
    "min_accuracy": ("accuracy", "min"),
    "max_false_positive_rate": ("false_positive_rate", "max"),
    "max_false_positive_rate_upper_bound": ("false_positive_rate_upper_bound", "max"),
    "max_avg_turns": ("avg_turns", "max"),
    "max_cost_usd": ("cost_usd", "max"),
    "max_cost_per_task_usd": ("cost_per_task_usd", "max"),
    "max_flagged_share": ("flagged_share", "max"),
    "max_flags": ("flags", "max"),
    "max_error_rate": ("error_rate", "max"),
}


def _met(rule: str, required: float, actual: float | int | None) -> bool:
    figure, direction = RULES[rule]
    if actual is None:
        # Nothing to measure: no cost reported is no cost; no false-positive rate (nothing named,
        # no negative scenario) is none; a missing accuracy or turns never meets a threshold.
        return figure in (
            "cost_usd",
            "cost_per_task_usd",
            "false_positive_rate",
            "false_positive_rate_upper_bound",
            "flagged_share",
            "error_rate",
        )
    return actual >= required if direction == "min" else actual <= required


def decide(audit: AuditArtefact, loaded: LoadedPolicy) -> Decision:
    figures = figures_of(audit)
    reasons: list[Reason] = []
    decision: DecisionName = "no-deploy"
    if audit.counted < loaded.policy.min_tasks:
        reasons.append(
            Reason(
                level="any",
                rule="min_tasks",
                required=loaded.policy.min_tasks,
                actual=audit.counted,
                met=False,
            )
        )
    else:
        for level in LEVELS:
            rules = loaded.policy.levels.get(level)
            if rules is None:
                continue
            met_all = True
            for rule, required in rules.model_dump(exclude_none=True).items():
                actual = figures[RULES[rule][0]]
                met = _met(rule, float(required), actual)
                met_all &= met
                reasons.append(
                    Reason(level=level, rule=rule, required=required, actual=actual, met=met)
                )
            if met_all:
                decision = level
                break
    failed = [r for r in reasons if not r.met]
    shortfalls = "; ".join(
        f"{r.level} needs {r.rule} {r.required:g}, found {_shown(r.actual)}" for r in failed[:6]
    )
    if decision == "no-deploy":
        summary = f"no-deploy: {shortfalls}"
    else:
        summary = f"{decision}: every rule of {decision} met" + (
            f"; not higher: {shortfalls}" if failed else ""
        )
    return Decision(
        decision=decision,
        exit_code=EXIT_CODES[decision],
        run_id=audit.run.id,
        model=audit.model,
        benchmark=f"{audit.benchmark.name} {audit.benchmark.version} ({audit.benchmark.content_hash[:19]})",
        policy=str(loaded.path),
        policy_sha256=loaded.sha256,
        summary=summary,
        reasons=reasons,
        figures=figures,
    )


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    return f"{value:.4g}" if isinstance(value, float) else str(value)
