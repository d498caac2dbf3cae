"""Running an official "one program" evaluation (HumanEval's prompt + completion + test + check,
MBPP's imports + code + asserts) through code_exec's two processes: the solution half of the
program in the solution's process, the test half in the tests process, which sees the solution's
names (the prompt's helpers too) as proxies whose calls cross a pipe as plain data.

The verdict is the official one: the program passes when it runs to the end without an exception
(here: the driver prints the attempt's random marker after the last test statement), fails on any
exception, and times out past its time limit.
"""

from __future__ import annotations

import ast
import secrets
from dataclasses import dataclass

from benchyard.checks.base import CheckResult, CodeWorkspace
from benchyard.checks.code_exec import APART, DRIVER_MODULES, FAILURE_PREFIX, SAME
from benchyard.checks.code_support import exit_text, one_line, run_script, tail
from benchyard.sandbox.process import ProcessOutcome

MODULE = "solution"
"""The solution half is written as solution.py; its names, not the module, are what the tests
see, so an entry point named like the module (or like any module) keeps its meaning."""

STARTUP_ALLOWANCE_SEC = 1.0
"""Added to a program's time limit for the sandbox and interpreters to start (the official
evaluators time the program alone; their parent process also waits one second more)."""

GUARD_SOURCE = """
import builtins, faulthandler, os, sys

faulthandler.disable()
builtins.exit = builtins.quit = builtins.help = None
os.environ["OMP_NUM_THREADS"] = "1"
for name in (
    "kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork",
    "forkpty", "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown",
    "chmod", "chown", "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir",
):
    setattr(os, name, None)
for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
    sys.modules[name] = None
DISABLED = {"shutil": ("rmtree", "move", "chown"), "subprocess": ("Popen",)}


def disable(module):
    for name in DISABLED.pop(module.__name__, ()):  # once: a reload restores them, as officially
        setattr(module, name, None)


class GuardedLoader:
    def __init__(self, loader):
        self.loader = loader

    def __getattr__(self, name):  # create_module, get_source, ...: the module's own loader's
        return getattr(self.loader, name)

    def exec_module(self, module):
        self.loader.exec_module(module)
        disable(module)
        if not DISABLED and GUARD in sys.meta_path:
            sys.meta_path.remove(GUARD)


class Guard:
    def find_spec(self, name, path=None, target=None):
        if name not in DISABLED:
            return None
        for finder in sys.meta_path:
            find = None if finder is self else getattr(finder, "find_spec", None)
            spec = None if find is None else find(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = GuardedLoader(spec.loader)
                return spec
        return None


for name in list(DISABLED):
    if name in sys.modules:
        disable(sys.modules[name])
GUARD = Guard()
if DISABLED:
    sys.meta_path.insert(0, GUARD)
"""
"""HumanEval's `reliability_guard`: the official evaluator disables these functions before it
runs a program, so a completion that calls one of them fails there, and fails here. `shutil`'s
and `subprocess`'s are disabled as the module is first imported (the official guard imports both,
in a parent process that has them already; here, each would cost every grading its import)."""

RELIABILITY_GUARD = f"exec({GUARD_SOURCE!r}, {{}})\n"
"""The guard, on one line before the solution (so line numbers move by one), run in a namespace
of its own: none of its names reach the solution's."""


@dataclass(frozen=True)
class Program:
    solution: str  # the solution half: the module the tests call into
    tests: str  # the test half: run with the solution's names in scope
    time_limit_sec: float
    same_process: bool = False
    names: tuple[str, ...] | None = None
    """The solution's names the tests see as globals: the entry point and the names the benchmark
    declares (even one named like a builtin, as MBPP's `sum`); None for all of them but those
    named like a builtin (scripts/code_exec_driver.py)."""


def top_level_names(source: str) -> list[str] | None:
    """The names Python code defines or imports at its top level (functions, classes, imports,
    assignments); None when it does not parse."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: list[str] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names += [(alias.asname or alias.name).partition(".")[0] for alias in node.names]
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return names


async def run_program(code: CodeWorkspace, program: Program, label: str) -> CheckResult:
    """Run `program` in a fresh sandbox; passed when its tests ran to the end."""
    code.write_file(f"{MODULE}.py", program.solution)
    marker = f"benchyard-marker-{secrets.token_hex(16)}"
    marker_file = code.io_dir / "marker"
    marker_file.write_text(marker, encoding="utf-8")
    tests_file = code.io_dir / "tests.py"
    tests_file.write_text(program.tests, encoding="utf-8")
    mode = "same" if program.same_process else "process"
    how = SAME if program.same_process else APART
    timeout = program.time_limit_sec + STARTUP_ALLOWANCE_SEC
    outcome = await run_script(
        code,
        "code_exec_driver",
        [
            str(marker_file),
            MODULE,
            str(tests_file),
            mode,
            *([] if program.names is None else [",".join(program.names)]),
        ],
        timeout_sec=timeout,
        modules=DRIVER_MODULES,
    )
    if outcome.timed_out:
        return CheckResult.of(
            False, f"{label}: timed out (limit {program.time_limit_sec:g}s) {how}"
        )
    stdout = outcome.stdout.decode("utf-8", errors="replace")
    if outcome.returncode == 0 and marker in stdout:
        return CheckResult.of(True, f"{label}: passed (ran to the end) {how}")
    if outcome.returncode == 0:
        return CheckResult.of(
            False, f"{label}: failed: exited 0 before the tests ran to the end {how}"
        )
    return CheckResult.of(False, f"{label}: failed: {_failure(stdout, outcome)} {how}")


def _failure(stdout: str, outcome: ProcessOutcome) -> str:
    for line in reversed(stdout.splitlines()):
        if line.startswith(FAILURE_PREFIX):
            return one_line(line.removeprefix(FAILURE_PREFIX))
    return f"the program failed ({exit_text(outcome.returncode)}): {tail(outcome.stderr)}"
