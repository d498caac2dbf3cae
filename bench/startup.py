"""Start-up: the wall time of `benchyard --help`, `runs`, `show latest` and `run` of one trivial
attempt (the in-process oracle and one `equals` check: no agent process, no sandbox started), each
against the floor measured next to it, a bare `python -c pass` of the same interpreter.

Medians of REPEATS interleaved repetitions: wall and CPU (the process's user + system) ms, wall
seconds with their range, and the wall ratio to the floor with its range. The commands compile
their bytecode once, into a scratch PYTHONPYCACHEPREFIX (as an installed package has it, whatever
PYTHONDONTWRITEBYTECODE says), in a warm-up run that is not measured.
Run: .venv/bin/python bench/startup.py
Another tree: PYTHONPATH=/path/to/other/src .venv/bin/python bench/startup.py (the commands
inherit PYTHONPATH; the first line printed says which benchyard was measured).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import BENCHYARD, interleaved, ratios, spread, trivial_benchmark

REPEATS = 7
FLOOR = "floor: python -c pass"


def _environment(scratch: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    return env


def _timer(
    command: list[str], env: dict[str, str], cwd: Path, cpu: list[float]
) -> Callable[[], float]:
    """A measure: one run of `command` (which must succeed), in seconds of wall time; the CPU
    seconds it took (user and system) are appended to `cpu`."""

    def measure() -> float:
        before = _children_cpu()
        started = time.perf_counter()
        subprocess.run(command, check=True, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
        elapsed = time.perf_counter() - started
        cpu.append(_children_cpu() - before)
        return elapsed

    return measure


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _measured(env: dict[str, str], cwd: Path) -> str:
    code = "import benchyard; print(benchyard.__file__)"
    found = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True)
    return found.stdout.decode().strip()


def main() -> None:
    cpu: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as name:
        scratch = Path(name)
        env = _environment(scratch)
        bench = trivial_benchmark(scratch / "bench", 1)
        read_db = f"sqlite:///{scratch / 'read.db'}"
        run = [*BENCHYARD, "run", str(bench), "--agent", "oracle", "-q"]
        commands = {
            FLOOR: [sys.executable, "-c", "pass"],
            "benchyard --help": [*BENCHYARD, "--help"],
            "benchyard runs": [*BENCHYARD, "runs", "--db", read_db],
            "benchyard show latest": [*BENCHYARD, "show", "latest", "--db", read_db],
            "benchyard run, 1 trivial attempt": [*run, "--db", f"sqlite:///{scratch / 'run.db'}"],
        }
        measures = {
            label: _timer(command, env, scratch, cpu.setdefault(label, []))
            for label, command in commands.items()
        }
        _timer([*run, "--db", read_db], env, scratch, [])()  # the run that runs and show read
        for measure in measures.values():
            measure()  # warm-up: bytecode compiled, files cached, the run's store created
        print(f"benchyard measured: {_measured(env, scratch)}")
        for times in cpu.values():
            times.clear()
        values = interleaved(measures, REPEATS)
    print(
        f"{'command':34} {'wall ms':>8} {'CPU ms':>7}  {'wall s (range, n)':>26}  x floor (range)"
    )
    for label, times in values.items():
        line = (
            f"{label:34} {statistics.median(times) * 1000:8.0f}"
            f" {statistics.median(cpu[label]) * 1000:7.0f}  {spread(times):>26}"
        )
        if label != FLOOR:
            line += f"  {spread(ratios(times, values[FLOOR]))}"
        print(line)


if __name__ == "__main__":
    main()
