"""IFEval (`input_data.jsonl`: `key`, `prompt`, `instruction_id_list`, `kwargs`): one scenario
per prompt, with one `ifeval` check per instruction in each mode. The mode that decides the verdict
(`--option mode=strict`, the default, or `loose`) has weight 1; the other has weight 0, reported
but never deciding. The report gives prompt-level and instruction-level accuracy in both modes.
IFEval has no reference answers, so `verify` has nothing to run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from benchyard.formats.ifeval.check import INSTRUCTIONS
from benchyard.importers.base import ImportOptions
from benchyard.importers.source import Fields, RecordImporter

if TYPE_CHECKING:
    from benchyard.store.records import AttemptRecord

MODES = ("strict", "loose")


def scenario_id(key: int) -> str:
    return f"ifeval-{key}"


def check_name(mode: str, instruction: str) -> str:
    return f"{mode} {instruction}"


class IfevalOptions(ImportOptions):
    mode: Literal["strict", "loose"] = Field(
        default="strict", description="The mode whose checks decide the verdict (weight 1)."
    )


class IfevalImporter(RecordImporter):
    name = "ifeval"
    summary = "IFEval JSONL: 25 instruction types, strict and loose, prompt- and instruction-level"
    options = IfevalOptions

    def describe(self, options: IfevalOptions) -> str:
        return (
            f"IFEval: verifiable instructions; the verdict is {options.mode} prompt-level "
            "(every instruction followed)."
        )

    def scenario(self, fields: Fields, options: IfevalOptions) -> dict[str, Any] | None:
        return scenario_data(fields, options)

    def metrics(
        self, attempts: Sequence[AttemptRecord], options: Mapping[str, Any]
    ) -> dict[str, Any]:
        return ifeval_metrics(attempts)


def scenario_data(fields: Fields, options: IfevalOptions) -> dict[str, Any] | None:
    """One prompt's scenario, or None when its fields have problems."""
    key = fields.get("key", int)
    prompt = fields.get("prompt", str)
    ids = fields.get("instruction_id_list", list)
    kwargs = fields.get("kwargs", list)
    if ids is not None and kwargs is not None and len(ids) != len(kwargs):
        fields.problem("kwargs", f"{len(kwargs)} entries for {len(ids)} instructions")
    for index, instruction in enumerate(ids or []):
        if instruction not in INSTRUCTIONS:
            fields.problem(f"instruction_id_list[{index}]", f"unknown instruction {instruction!r}")
    for index, arguments in enumerate(kwargs or []):
        if not isinstance(arguments, dict):
            fields.problem(f"kwargs[{index}]", "expected an object")
    if not fields.ok:
        return None
    assert key is not None and prompt is not None and ids is not None and kwargs
    checks = []
    for mode in (options.mode, *(m for m in MODES if m != options.mode)):
        for instruction, arguments in zip(ids, kwargs, strict=True):
            check: dict[str, Any] = {
                "type": "ifeval",
                "name": check_name(mode, instruction),
                "instruction": instruction,
                "mode": mode,
            }
            given = {k: v for k, v in arguments.items() if v is not None}
            if given:
                check["kwargs"] = given
            if mode != options.mode:
                check["weight"] = 0
            checks.append(check)
    return {
        "id": scenario_id(key),
        "category": "ifeval",
        "tags": ["ifeval", *sorted({i.split(":")[0] for i in ids})],
        "description": f"IFEval key {key}: {', '.join(ids)}",
        "stimulus": prompt,
        "checks": checks,
    }


def ifeval_metrics(attempts: Sequence[AttemptRecord]) -> dict[str, Any]:
    """Prompt-level and instruction-level accuracy in both modes, over graded attempts, from the
    `ifeval` check results (as the official report computes them)."""
    figures: dict[str, Any] = {}
    for mode in MODES:
        prompts = followed_prompts = instructions = followed = 0
        by_group: dict[str, list[int]] = {}
        for attempt in attempts:
            results = [
                check
                for check in attempt.checks
                if check.check_type == "ifeval" and check.label.startswith(f"{mode} ")
            ]
            if not results:
                continue
            prompts += 1
            followed_prompts += all(check.passed for check in results)
            instructions += len(results)
            followed += sum(check.passed for check in results)
            for check in results:
                group = check.label.removeprefix(f"{mode} ").split(":")[0]
                tally = by_group.setdefault(group, [0, 0])
                tally[0] += int(check.passed)
                tally[1] += 1
        if not prompts:
            continue
        figures[mode] = {
            "prompt_level": followed_prompts / prompts,
            "prompt_level_raw": f"{followed_prompts}/{prompts}",
            "instruction_level": followed / instructions,
            "instruction_level_raw": f"{followed}/{instructions}",
            "by_instruction_group": {
                group: round(passed / total, 6)
                for group, (passed, total) in sorted(by_group.items())
            },
        }
    return figures


IMPORTER = IfevalImporter()
