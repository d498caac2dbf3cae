"""HumanEval (`HumanEval.jsonl.gz`, and files in its layout such as HumanEval+): one scenario per
problem. The prompt is the stimulus; the `humaneval` check runs the official program (prompt +
completion + test + `check(entry_point)`, official time limit 3 s); the canonical solution is the
reference, so `benchyard verify` runs it through that program."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from benchyard.importers.base import ImportOptions, message_stimulus
from benchyard.importers.source import Fields, RecordImporter

DEFAULT_SYSTEM = (
    "Complete the Python function below. Reply with the completed function (or only its body) "
    "in one ```python block."
)
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def scenario_id(task_id: str) -> str:
    """`HumanEval/0` -> `HumanEval-0` (scenario ids hold letters, digits, `_ . : -`)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.:-]+", "-", task_id).strip("-")
    return cleaned if cleaned[:1].isalnum() else f"t{cleaned}"


class HumanEvalOptions(ImportOptions):
    time_limit_sec: float = Field(default=3.0, gt=0, description="Official: 3 s per program.")
    guard: bool = Field(default=True, description="Apply HumanEval's reliability_guard.")
    same_process: bool = Field(
        default=False, description="Run the test in the solution's process (forgeable)."
    )
    system: str = Field(
        default=DEFAULT_SYSTEM, description="The system prompt; empty for none (raw completion)."
    )


class HumanEvalImporter(RecordImporter):
    name = "humaneval"
    summary = "HumanEval and HumanEval+-style JSONL(.gz): the official program, 3 s"
    options = HumanEvalOptions

    def describe(self, options: HumanEvalOptions) -> str:
        return (
            "HumanEval: Python functions completed from their docstring, graded by the official "
            "program (prompt + completion + test + check) in 3 s."
        )

    def scenario(self, fields: Fields, options: HumanEvalOptions) -> dict[str, Any] | None:
        return scenario_data(fields, options)


def scenario_data(fields: Fields, options: HumanEvalOptions) -> dict[str, Any] | None:
    """One problem's scenario, or None when its fields have problems."""
    task_id = fields.get("task_id", str)
    prompt = fields.get("prompt", str)
    test = fields.get("test", str)
    entry_point = fields.get("entry_point", str)
    canonical = fields.get("canonical_solution", str, required=False)
    if entry_point is not None and not IDENTIFIER.match(entry_point):
        fields.problem("entry_point", f"{entry_point!r} is not a Python name")
    if test is not None and "def check" not in test:
        fields.problem("test", "defines no check(candidate) function")
    if not fields.ok:
        return None
    assert task_id and prompt is not None and test is not None and entry_point
    check: dict[str, Any] = {
        "type": "humaneval",
        "prompt": prompt,
        "test": test,
        "entry_point": entry_point,
    }
    if options.time_limit_sec != 3.0:
        check["time_limit_sec"] = options.time_limit_sec
    if not options.guard:
        check["guard"] = False
    if options.same_process:
        check["same_process"] = True
    data: dict[str, Any] = {
        "id": scenario_id(task_id),
        "category": "humaneval",
        "description": f"{task_id} ({entry_point})",
        "tags": ["humaneval", "coding"],
        "stimulus": message_stimulus(prompt, options.system),
        "checks": [check],
    }
    if canonical is not None:
        data["reference"] = canonical
    return data


IMPORTER = HumanEvalImporter()
