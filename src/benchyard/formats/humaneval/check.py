"""`humaneval`: HumanEval's official program, `prompt + completion + "\\n" + test + "\\n" +
check(entry_point)`, run to the end within the time limit (official: 3 s).

The program is split where the model's part ends: `prompt + completion` is the solution (so a
completion may use helpers the prompt defines, and the test may call them too), `test` and
`check(entry_point)` run in the tests process, where every name of the solution is a proxy
(scripts/code_exec_driver.py). The completion is the answer's first Python (or untagged) fenced
block, else the answer itself: a function body continues the prompt, as in the official samples; a
whole function written again after the prompt replaces the prompt's (the prompt's own ends with its
docstring, a complete body). An answer whose first line lost its indentation (an agent that
strips its answer) gets it back when the program would not compile otherwise (see solution_text).
"""

from __future__ import annotations

import re

from pydantic import Field

from benchyard.checks.answer_text import fenced_blocks
from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.code_support import PYTHON_LANGUAGES, workspace
from benchyard.checks.registry import check
from benchyard.formats.program import (
    RELIABILITY_GUARD,
    Program,
    run_program,
    top_level_names,
)

MAX_ANSWER_CHARS = 1_000_000
IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"


class HumanEvalParams(CheckParams):
    prompt: str = Field(description="The problem's prompt: signature and docstring.")
    test: str = Field(description="The problem's test code, defining check(candidate).")
    entry_point: str = Field(pattern=IDENTIFIER, description="The function the test checks.")
    time_limit_sec: float = Field(default=3.0, gt=0, description="Official: 3 s.")
    guard: bool = Field(
        default=True,
        description="Disable what HumanEval's reliability_guard disables (os.system, os.remove, "
        "subprocess.Popen, exit, ...) in the solution's process, as the official evaluator does.",
    )
    same_process: bool = Field(
        default=False,
        description="Run test and solution in one process, as one program (forgeable).",
    )


def completion_of(answer: str) -> str:
    """The completion in an answer: its first Python (or untagged) fenced block, else the answer
    with its leading blank lines dropped (indentation kept)."""
    blocks = fenced_blocks(answer)
    for wanted in (PYTHON_LANGUAGES, ("",)):
        block = next((b for b in blocks if b.language in wanted), None)
        if block is not None:
            return block.body + "\n"
    return re.sub(r"\A(?:[ \t]*\n)+", "", answer).rstrip() + "\n"


def solution_text(prompt: str, completion: str) -> str:
    """`prompt + completion`; when that does not compile, the first of: the body's first line
    indented again (an agent that strips its answer), or a whole function written after a prompt that has
    no docstring (the prompt's function closed with `pass` first). Else as it is, so that the
    error is the program's own."""
    program = prompt + completion
    if _compiles(program):
        return program
    for candidate in (
        prompt + "    " + completion if completion[:1] not in (" ", "\t") else None,
        prompt + "    pass\n" + completion,
    ):
        if candidate is not None and _compiles(candidate):
            return candidate
    return program


def _compiles(source: str) -> bool:
    if len(source) > MAX_ANSWER_CHARS:
        return False
    try:
        compile(source, "<solution>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def declared_names(prompt: str, entry_point: str) -> tuple[str, ...]:
    """The names the tests may use from the solution: the entry point, and what the prompt defines
    or imports at its top level (helpers such as `poly` or `encode_cyclic`, which some tests
    call). A completion's other names stay the solution's own."""
    return tuple(dict.fromkeys([entry_point, *(top_level_names(prompt) or [])]))


def official_program(params: HumanEvalParams, completion: str) -> Program:
    solution = solution_text(params.prompt, completion)
    return Program(
        solution=(RELIABILITY_GUARD if params.guard else "") + solution,
        tests=f"{params.test}\ncheck({params.entry_point})\n",
        time_limit_sec=params.time_limit_sec,
        same_process=params.same_process,
        names=declared_names(params.prompt, params.entry_point),
    )


@check("humaneval", HumanEvalParams, needs_code=True, reads_change=False)
async def humaneval(params: HumanEvalParams, evidence: Evidence) -> CheckResult:
    """HumanEval's official program (prompt + completion + test + check) runs without error."""
    code = workspace(evidence, "humaneval")
    program = official_program(params, completion_of(evidence.answer))
    return await run_program(code, program, f"check({params.entry_point})")
