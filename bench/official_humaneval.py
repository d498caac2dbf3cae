"""HumanEval's official evaluator (openai/human-eval, execution.py: check_correctness; MIT), as it grades
each problem: a multiprocessing Manager for the result, a forked Process that makes a temporary
directory, applies the reliability guard and `exec`s prompt + completion + test +
check(entry_point) under a 3 s time limit; problems graded by a ThreadPoolExecutor, as
evaluate_functional_correctness does. The completions are the canonical solutions.

bench/code_exec.py runs it in a cgroup of its own as the floor of benchyard's HumanEval grading.
Usage: python3 -P bench/official_humaneval.py HumanEval.jsonl.gz PROBLEMS WORKERS
"""

from __future__ import annotations

import contextlib
import faulthandler
import gzip
import io
import json
import multiprocessing
import os
import signal
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Any

TIMEOUT_SEC = 3.0


class TimeoutException(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float) -> Any:
    def handler(signum: int, frame: Any) -> None:
        raise TimeoutException("Timed out!")

    signal.setitimer(signal.ITIMER_REAL, seconds)
    signal.signal(signal.SIGALRM, handler)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


@contextlib.contextmanager
def swallow_io() -> Any:
    stream = io.StringIO()
    with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
        yield


def reliability_guard(maximum_memory_bytes: int | None = None) -> None:
    """The official guard's main moves (resource limits left out, as in its default)."""
    faulthandler.disable()
    import builtins
    import shutil
    import subprocess

    builtins.exit = None  # type: ignore[assignment]
    builtins.quit = None  # type: ignore[assignment]
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid"):
        setattr(os, name, None)
    for name in ("fork", "forkpty", "killpg", "rename", "renames", "truncate", "replace"):
        setattr(os, name, None)
    for name in ("unlink", "fchmod", "fchown", "chmod", "chown", "chroot", "lchown", "getcwd"):
        setattr(os, name, None)
    os.chdir = None  # type: ignore[assignment]
    shutil.rmtree = None  # type: ignore[assignment]
    shutil.move = None  # type: ignore[assignment]
    shutil.chown = None  # type: ignore[assignment]
    subprocess.Popen = None  # type: ignore[assignment,misc]
    builtins.help = None  # type: ignore[assignment]
    for module in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[module] = None  # type: ignore[assignment]


def unsafe_execute(problem: dict[str, Any], completion: str, timeout: float, result: Any) -> None:
    with tempfile.TemporaryDirectory() as dirname:
        os.chdir(dirname)
        import shutil

        rmtree, rmdir, chdir = shutil.rmtree, os.rmdir, os.chdir
        reliability_guard()
        program = (
            problem["prompt"] + completion + "\n" + problem["test"] + "\n"
            f"check({problem['entry_point']})"
        )
        try:
            with swallow_io(), time_limit(timeout):
                exec(program, {})
            result.append("passed")
        except TimeoutException:
            result.append("timed out")
        except BaseException as error:
            result.append(f"failed: {error}")
        shutil.rmtree, os.rmdir, os.chdir = rmtree, rmdir, chdir
        os.chdir("/")


def check_correctness(problem: dict[str, Any], completion: str, timeout: float) -> bool:
    manager = multiprocessing.Manager()
    result = manager.list()
    process = multiprocessing.Process(
        target=unsafe_execute, args=(problem, completion, timeout, result)
    )
    process.start()
    process.join(timeout=timeout + 1)
    if process.is_alive():
        process.kill()
    outcome = result[0] if result else "timed out"
    manager.shutdown()
    return outcome == "passed"


def main() -> None:
    source, count, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with gzip.open(source, "rt", encoding="utf-8") as lines:
        problems = [json.loads(line) for _, line in zip(range(count), lines, strict=False)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        passed = list(
            pool.map(lambda p: check_correctness(p, p["canonical_solution"], TIMEOUT_SEC), problems)
        )
    if not all(passed):
        raise SystemExit(f"only {sum(passed)} of {len(passed)} canonical solutions passed")


if __name__ == "__main__":
    main()
