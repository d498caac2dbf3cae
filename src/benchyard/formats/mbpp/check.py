"""`mbpp`: MBPP's program, `test_imports + test_setup_code + code + every assert of test_list`,
run to the end within a time limit.

MBPP ships no executor; the paper and the common harnesses run that program and pass it when no
assert fails. Here the imports, the setup code and the model's code are the solution's half (so
the code may use what the setup defines), and the imports and asserts run in the tests process,
where the solution's names are proxies (scripts/code_exec_driver.py). The code is the answer's
first Python (or untagged) fenced block, else what stands between `[BEGIN]` and `[DONE]` (the
paper's prompt format), else the whole answer.
"""

from __future__ import annotations

import re

from pydantic import Field

from benchyard.checks.answer_reference import graded_reference
from benchyard.checks.answer_text import fenced_blocks
from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.code_support import PYTHON_LANGUAGES, workspace
from benchyard.checks.registry import check
from benchyard.formats.program import Program, run_program, top_level_names

_BEGIN_DONE = re.compile(r"\[BEGIN\](?P<code>.*?)(?:\[DONE\]|\Z)", re.DOTALL)


class MbppParams(CheckParams):
    tests: list[str] = Field(min_length=1, description="The asserts of test_list, all graded.")
    imports: list[str] = Field(default_factory=list, description="test_imports, run first.")
    setup: str = Field(default="", description="test_setup_code, run before the code.")
    time_limit_sec: float = Field(default=10.0, gt=0)
    same_process: bool = Field(
        default=False, description="Run asserts and code in one process, as one program."
    )


def code_of(answer: str) -> str:
    blocks = fenced_blocks(answer)
    for wanted in (PYTHON_LANGUAGES, ("",)):
        block = next((b for b in blocks if b.language in wanted), None)
        if block is not None:
            return block.body + "\n"
    found = _BEGIN_DONE.search(answer)
    if found is not None:
        return found["code"].strip("\n") + "\n"
    return answer.strip("\n") + "\n"


def declared_names(params: MbppParams, reference: str | None) -> tuple[str, ...] | None:
    """The names the asserts may use from the solution: what the reference code and the setup
    code define at their top level (the task's function, even one named like a builtin, as task
    126's `sum`). None without a reference that parses: every name but a builtin's."""
    defined = top_level_names(code_of(reference)) if reference else None
    if defined is None:
        return None
    return tuple(dict.fromkeys([*defined, *(top_level_names(params.setup) or [])]))


def program_of(params: MbppParams, code: str, names: tuple[str, ...] | None = None) -> Program:
    imports = "".join(f"{line}\n" for line in params.imports)
    setup = f"{params.setup}\n" if params.setup.strip() else ""
    return Program(
        solution=imports + setup + code,
        tests=imports + "".join(f"{line}\n" for line in params.tests),
        time_limit_sec=params.time_limit_sec,
        same_process=params.same_process,
        names=names,
    )


@check("mbpp", MbppParams, needs_code=True, reads_change=False)
async def mbpp(params: MbppParams, evidence: Evidence) -> CheckResult:
    """MBPP's program (imports, setup code, the code, every assert) runs without error."""
    code = workspace(evidence, "mbpp")
    names = declared_names(params, graded_reference(evidence))
    program = program_of(params, code_of(evidence.answer), names)
    return await run_program(code, program, f"{len(params.tests)} asserts")
