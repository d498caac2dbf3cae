"""What the code checks share: their workspace, code read from an answer, and running the bundled
scripts (checks/scripts/) with python3 in the verification sandbox."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path

from benchyard.checks.answer_text import fenced_blocks
from benchyard.checks.base import CheckFailedToRun, CodeWorkspace, Evidence
from benchyard.sandbox.process import ProcessOutcome

PYTHON_LANGUAGES = ("python", "py", "python3")
EXIT_NOT_RUNNABLE = (126, 127)  # the shell could not find or execute the command
TAIL_CHARS = 300
SCRIPTS = Path(__file__).parent / "scripts"


def workspace(evidence: Evidence, check: str) -> CodeWorkspace:
    """The check's verification workspace; without one (a scenario graded outside the runner) the
    check cannot run."""
    if evidence.code is None:
        raise CheckFailedToRun(f"{check} needs a verification workspace, and none was given")
    return evidence.code


def answer_code(answer: str) -> str:
    """The code in an answer: its first ```python block, else its first untagged block, else the
    whole answer."""
    blocks = fenced_blocks(answer)
    for wanted in (PYTHON_LANGUAGES, ("",)):
        block = next((b for b in blocks if b.language in wanted), None)
        if block is not None:
            return block.body + "\n"
    return answer.strip() + "\n"


@functools.cache
def script(name: str) -> str:
    """The source of a bundled script, to pass to `python3 -I -c`."""
    return (SCRIPTS / f"{name}.py").read_text(encoding="utf-8")


async def run_checked(
    code: CodeWorkspace,
    argv: Sequence[str],
    *,
    timeout_sec: float,
    env: Mapping[str, str] | None = None,
) -> ProcessOutcome:
    """Run a command in the workspace; a command the sandbox cannot find or execute is a fault of
    the sandbox image, not of the agent (CheckFailedToRun)."""
    outcome = await code.run(argv, timeout_sec=timeout_sec, env=env)
    if outcome.returncode in EXIT_NOT_RUNNABLE:
        shown = argv[2] if list(argv[:2]) == ["/bin/sh", "-c"] else argv[0]
        raise CheckFailedToRun(
            f"'{shown}' could not run in the sandbox (exit {outcome.returncode}): "
            f"{tail(outcome.stderr)}"
        )
    return outcome


async def run_script(
    code: CodeWorkspace, name: str, arguments: Sequence[str], *, timeout_sec: float
) -> ProcessOutcome:
    """Run a bundled script with the sandbox's python3, isolated from files in the workdir."""
    return await run_checked(
        code, ["python3", "-I", "-c", script(name), *arguments], timeout_sec=timeout_sec
    )


def tail(data: bytes, chars: int = TAIL_CHARS) -> str:
    """The end of some output, as one line for a reason."""
    text = one_line(data.decode("utf-8", errors="replace"))
    return text if len(text) <= chars else "..." + text[-chars:]


def one_line(text: str) -> str:
    """Output of untrusted code fit for a reason: one line, no NUL (which no text column takes)."""
    return " ".join(text.replace("\x00", "\\x00").split())
