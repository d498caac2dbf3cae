"""What the code checks share: their workspace, code read from an answer, running commands that run
the agent's code, and running the bundled scripts (checks/scripts/) with python3 in the
verification sandbox."""

from __future__ import annotations

import base64
import dataclasses
import functools
import importlib.util
import marshal
import re
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from benchyard.checks.answer_text import fenced_blocks
from benchyard.checks.base import CheckFailedToRun, CodeWorkspace, Evidence
from benchyard.sandbox.process import ProcessOutcome

PYTHON_LANGUAGES = ("python", "py", "python3")
EXIT_NOT_RUNNABLE = (126, 127)  # the shell could not find or execute the command
EXIT_HINTS = {126: "command not executable?", 127: "command not found?"}
READY = b"benchyard: ready\n"  # the first line of every bundled script's stdout
CANNOT_RUN = b"benchyard: cannot run: "  # ... or this one, when the sandbox lacks what it needs
MODEL_CODE_ENV = {"PYTHONNOUSERSITE": "1"}  # HOME is the workdir: its user site is the agent's
TAIL_CHARS = 300
SCRIPTS = Path(__file__).parent / "scripts"
PACKED = "#benchyard-code"  # starts a bundled script given with its bytecode (see packed)
SCRIPT_ENV = "BENCHYARD_SCRIPT"  # the bundled script that RUN_PACKED runs, packed
MODULE_ENV = "BENCHYARD_MODULE_"  # + a name: a bundled module the script loads, packed
# `BENCHYARD_SCRIPT=PACKED_SCRIPT python3 -I -c RUN_PACKED ARGS...`: runs the packed script as
# `__main__` with sys.argv[1:] == ARGS, from its bytecode when the sandbox's python3 has the magic
# number it was compiled for (benchyard's own interpreter), else from its source, compiled there;
# a script given as plain source is compiled as it is. The variable is gone from the environment
# before the script runs, so nothing it starts inherits it. Without that variable (a sandbox that
# did not pass it), or a python3 without zlib, it says so as every bundled script says what the
# sandbox lacks (CANNOT_RUN), rather than failing like the agent's code.
RUN_PACKED = (
    "import os, sys\n"
    "def _benchyard_code(n):\n"
    "    try:\n"
    f"        p = os.environ.pop('{SCRIPT_ENV}')\n"
    "        if p.startswith('#benchyard-code '):\n"
    "            import binascii, zlib\n"
    "    except (KeyError, ImportError) as e:\n"
    "        sys.stdout.write(f'benchyard: cannot run: {type(e).__name__}: {e}\\n')\n"
    "        raise SystemExit(2)\n"
    "    if not p.startswith('#benchyard-code '):\n"
    "        return compile(p, n, 'exec', dont_inherit=True)\n"
    "    _, magic, code, source = p.split(' ')\n"
    "    m = getattr(sys.modules.get('_frozen_importlib_external'), 'MAGIC_NUMBER', b'')\n"
    "    if magic == m.hex():\n"
    "        import marshal\n"
    "        return marshal.loads(zlib.decompress(binascii.a2b_base64(code)))\n"
    "    return compile(zlib.decompress(binascii.a2b_base64(source)), n, 'exec', dont_inherit=True)\n"
    "_benchyard_main = _benchyard_code('<script>')\n"
    "del _benchyard_code\n"
    "exec(_benchyard_main)\n"
)


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


@functools.cache
def packed(name: str) -> str:
    """A bundled script with its bytecode, compiled once by benchyard's interpreter: `#benchyard-code
    <magic number> <bytecode> <source>`, the last two zlib-compressed and in base64. A python3 with
    the same magic number loads the code (no compiling 49 KB of driver, wire and solution server
    per grading), any other compiles the source. It travels in the environment of the command
    (run_script), which benchyard alone writes before anything of the agent's runs: nothing in the
    sandbox can change it. Not in the command line: python3 decodes and copies each byte of its
    arguments several times as it starts (about 150 instructions a byte, 4 ms of CPU for 72 KB),
    its environment once."""
    return pack(script(name), f"{name}.py")


def pack(source: str, filename: str, magic: bytes = importlib.util.MAGIC_NUMBER) -> str:
    """`source` with its bytecode, compiled by this interpreter for `magic` (see packed)."""
    code = marshal.dumps(compile(source, filename, "exec", dont_inherit=True))
    return " ".join([PACKED, magic.hex(), _zipped(code), _zipped(source.encode("utf-8"))])


def _zipped(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data, 9)).decode("ascii")


async def run_model_code(
    code: CodeWorkspace,
    argv: Sequence[str],
    *,
    timeout_sec: float,
    env: Mapping[str, str] | None = None,
) -> ProcessOutcome:
    """Run a command that runs code of the agent's (a test command, a lint command run in the
    patched workdir): whatever it does to its own process, an exit status included, is its own
    outcome, never a fault of the sandbox (see exit_text for a readable hint)."""
    return await code.run(argv, timeout_sec=timeout_sec, env={**MODEL_CODE_ENV, **(env or {})})


async def run_script(
    code: CodeWorkspace,
    name: str,
    arguments: Sequence[str],
    *,
    timeout_sec: float,
    env: Mapping[str, str] | None = None,
    modules: Sequence[str] = (),
) -> ProcessOutcome:
    """Run a bundled script with the sandbox's python3, isolated from files in the workdir; the
    bundled `modules` it loads go with it, each in its variable (MODULE_ENV + its name).

    Every bundled script writes `benchyard: ready` on stdout before it runs anything of the
    agent's, or `benchyard: cannot run: <why>` when the sandbox lacks what it needs; that line is
    taken off the outcome's stdout. The script could not run (CheckFailedToRun) when it says so,
    or when it wrote neither and the shell could not find or execute python3 (exit 126/127): code
    of the agent's cannot write before that line, nor take back what is written.
    """
    argv = ["python3", "-I", "-c", RUN_PACKED, *arguments]
    bundled = {
        SCRIPT_ENV: packed(name),
        **{MODULE_ENV + module: packed(module) for module in modules},
    }
    outcome = await run_model_code(
        code, argv, timeout_sec=timeout_sec, env={**(env or {}), **bundled}
    )
    if outcome.stdout.startswith(READY):
        return dataclasses.replace(outcome, stdout=outcome.stdout[len(READY) :])
    if outcome.stdout.startswith(CANNOT_RUN):
        why = outcome.stdout[len(CANNOT_RUN) :].split(b"\n", 1)[0]
        raise CheckFailedToRun(f"{name} cannot run in the sandbox: {tail(why)}")
    if outcome.returncode in EXIT_NOT_RUNNABLE:
        raise CheckFailedToRun(
            f"python3 could not run in the sandbox ({exit_text(outcome.returncode)}): "
            f"{tail(outcome.stderr)}"
        )
    return outcome


def exit_text(returncode: int | None) -> str:
    """How a process ended: `exit 1`, `exit 127 (command not found?)`, `killed by signal 9`."""
    if returncode is None:
        return "killed at the timeout"
    if returncode < 0:
        return f"killed by signal {-returncode}"
    return f"exit {returncode}{exit_hint(returncode)}"


def exit_hint(returncode: int | None) -> str:
    """A hint for the statuses the shell gives when it cannot find or run a command; the status
    proves nothing (the agent's code can end with any), so it stays a hint in a failure."""
    hint = EXIT_HINTS.get(returncode or 0)
    return f" ({hint})" if hint else ""


def tail(data: bytes, chars: int = TAIL_CHARS) -> str:
    """The end of some output, as one line for a reason."""
    text = one_line(data.decode("utf-8", errors="replace"))
    return text if len(text) <= chars else "..." + text[-chars:]


def one_line(text: str) -> str:
    """Output of untrusted code fit for a reason: one line, no NUL (which no text column takes)."""
    return " ".join(text.replace("\x00", "\\x00").split())


def matches_any(path: str, patterns: list[str]) -> bool:
    """Whether a path of the workdir matches one of the globs (see glob_regex)."""
    return any(glob_regex(pattern).fullmatch(path) for pattern in patterns)


@functools.cache
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex over whole paths: `*` and `?` stay within one directory, `**` spans any
    number of directories (none too): `**/test_*.py` matches `test_a.py` and `pkg/tests/test_a.py`."""
    segments = pattern.strip("/").split("/")
    regex = ""
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
            continue
        regex += "".join(
            "[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char)
            for char in segment
        )
        regex += "" if last else "/"
    return re.compile(regex)
