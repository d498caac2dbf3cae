"""Start-up: the wall time of `benchyard --help`, `runs`, `show latest` and `run` of one trivial
attempt (the in-process oracle and one `equals` check: no agent process, no sandbox started), each
against the floor measured next to it, a bare `python -c pass` of the same interpreter.

Medians of REPEATS interleaved repetitions: wall and CPU (user + system of every process the
command started, counted in a fresh cgroup per run: bench/common.py's CpuCounter, whose line
says how it counted; none of these commands starts a sandbox, so RUSAGE_CHILDREN agrees) ms, wall
seconds with their range, and the wall ratio to the floor with its range. The commands compile
their bytecode once, into a scratch PYTHONPYCACHEPREFIX (as an installed package has it, whatever
PYTHONDONTWRITEBYTECODE says), in a warm-up run that is not measured.
Run: .venv/bin/python bench/startup.py
Another tree: PYTHONPATH=/path/to/other/src .venv/bin/python bench/startup.py (the commands
inherit PYTHONPATH; the first line printed says which benchyard was measured).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import (
    BENCHYARD,
    Timing,
    as_installed,
    cgroup_timed,
    cpu_counter,
    interleaved,
    ratios,
    spread,
    timed,
    trivial_benchmark,
)

REPEATS = 7
FLOOR = "floor: python -c pass"


def _measured(cwd: Path) -> str:
    code = "import benchyard; print(benchyard.__file__)"
    found = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True)
    return found.stdout.decode().strip()


def main() -> None:
    cpu: dict[str, list[Timing]] = {}
    with tempfile.TemporaryDirectory() as name:
        scratch = Path(name)
        as_installed(scratch)
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
            label: cgroup_timed(command, cpu.setdefault(label, []), scratch)
            for label, command in commands.items()
        }
        timed([*run, "--db", read_db], [], scratch)()  # the run that runs and show read
        for measure in measures.values():
            measure()  # warm-up: bytecode compiled, files cached, the run's store created
        print(f"benchyard measured: {_measured(scratch)}")
        print(cpu_counter().note)
        for times in cpu.values():
            times.clear()
        values = interleaved(measures, REPEATS)
    print(
        f"{'command':34} {'wall ms':>8} {'CPU ms':>7}  {'wall s (range, n)':>26}  x floor (range)"
    )
    for label, times in values.items():
        line = (
            f"{label:34} {statistics.median(times) * 1000:8.0f}"
            f" {statistics.median(t.cpu for t in cpu[label]) * 1000:7.0f}  {spread(times):>26}"
        )
        if label != FLOOR:
            line += f"  {spread(ratios(times, values[FLOOR]))}"
        print(line)


if __name__ == "__main__":
    main()
