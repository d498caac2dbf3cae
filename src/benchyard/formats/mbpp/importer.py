"""MBPP, original (`mbpp.jsonl`: `text`, `test_setup_code`, `challenge_test_list`) and sanitized
(`sanitized-mbpp.json`: `prompt`, `test_imports`): one scenario per task. The stimulus is the task
text and its first test; the `mbpp` check runs imports, setup code, the model's code and every
assert of `test_list` as one program (10 s); the reference code is the reference."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from benchyard.importers.base import ImportOptions, message_stimulus
from benchyard.importers.source import Fields, RecordImporter

DEFAULT_SYSTEM = "Reply with the Python code in one ```python block."
SPLITS = ((1, 10, "prompt"), (11, 510, "test"), (511, 600, "validation"), (601, 10**9, "train"))
"""The paper's split of task ids: few-shot prompts, test, validation, train."""


def scenario_id(task_id: int) -> str:
    return f"mbpp-{task_id}"


def split_of(task_id: int) -> str:
    return next(name for low, high, name in SPLITS if low <= task_id <= high)


class MbppOptions(ImportOptions):
    time_limit_sec: float = Field(default=10.0, gt=0)
    challenge_tests: bool = Field(
        default=False, description="Also grade `challenge_test_list` (original MBPP)."
    )
    same_process: bool = Field(default=False, description="Asserts in the code's process.")
    system: str = Field(default=DEFAULT_SYSTEM, description="The system prompt; empty for none.")


class MbppImporter(RecordImporter):
    name = "mbpp"
    summary = "MBPP original (JSONL) and sanitized (JSON): imports + setup + code + all asserts"
    options = MbppOptions

    def describe(self, options: MbppOptions) -> str:
        return (
            "MBPP: short Python tasks, graded by running every assert of test_list with the "
            "task's imports and setup code."
        )

    def scenario(self, fields: Fields, options: MbppOptions) -> dict[str, Any] | None:
        return scenario_data(fields, options)


def scenario_data(fields: Fields, options: MbppOptions) -> dict[str, Any] | None:
    """One task's scenario, or None when its fields have problems."""
    task_id = fields.get("task_id", int)
    text_field = "prompt" if "prompt" in fields.record.data else "text"
    text = fields.get(text_field, str)
    code = fields.get("code", str, required=False)
    tests = fields.get("test_list", list)
    imports = fields.get("test_imports", list, required=False, default=[])
    setup = fields.get("test_setup_code", str, required=False, default="")
    challenge = fields.get("challenge_test_list", list, required=False, default=[])
    for name, values in (("test_list", tests), ("test_imports", imports)):
        if values is not None and not all(isinstance(item, str) for item in values):
            fields.problem(name, "expected a list of text")
    if tests == []:
        fields.problem("test_list", "must not be empty")
    if not fields.ok:
        return None
    assert task_id is not None and text is not None and tests
    graded = list(tests) + (list(challenge) if options.challenge_tests else [])
    message = f"{text}\nYour code should pass this test:\n\n{tests[0]}"
    check: dict[str, Any] = {"type": "mbpp", "tests": graded}
    if imports:
        check["imports"] = imports
    if setup.strip():
        check["setup"] = setup
    if options.time_limit_sec != 10.0:
        check["time_limit_sec"] = options.time_limit_sec
    if options.same_process:
        check["same_process"] = True
    data: dict[str, Any] = {
        "id": scenario_id(task_id),
        "category": "mbpp",
        "description": f"MBPP task {task_id}",
        "tags": ["mbpp", "coding", f"split:{split_of(task_id)}"],
        "stimulus": message_stimulus(message, options.system),
        "checks": [check],
    }
    if code is not None:
        data["reference"] = code
    return data


IMPORTER = MbppImporter()
