"""Start-up: the CPU of `benchyard --help`, `runs`, `show latest` and `run` of one trivial attempt
(the in-process oracle and one `equals` check: no agent process, no sandbox started), each as a
ratio to its floor measured next to it: a bare `python -c pass` of the same interpreter for
`--help` and `run`; for `runs` and `show`, a bare `python -c` reading with the standard library's
`sqlite3` the rows `runs` needs (the newest runs and their final attempts by verdict). Beside
them, for reference, a one-command Typer app with `runs`' options: what parsing a command line
with Typer costs before benchyard does anything.

Medians of REPEATS interleaved repetitions (each command and floor in turn), with their range: CPU
(user + system of every process the command started, counted in a fresh cgroup per run:
bench/common.py's CpuCounter, whose line says how it counted; none of these commands starts a
sandbox, so RUSAGE_CHILDREN agrees) in ms, each repetition's CPU over its floor's in the same
round, and wall ms for reference (a loaded machine disturbs wall time more than CPU). Issue 27's
goals are CPU seconds: --help 0.05 s, runs 0.25 s, run of one trivial attempt 0.45 s, set on a
machine whose floors took 16 and 24.5 ms: each is printed in ms and as that ratio to its floor
(x3.1, x10.2, x28.1), which a slower or faster machine can be held to. The
commands compile their bytecode once, into a scratch PYTHONPYCACHEPREFIX (as an installed
package has it, whatever PYTHONDONTWRITEBYTECODE says), in a warm-up run that is not measured.
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
READ_FLOOR = "floor: python -c sqlite3 read"
# The rows `runs` reads, read by the standard library alone: the floor of a command that reads.
SQLITE_READ = (
    "import sqlite3, sys\n"
    "c = sqlite3.connect(sys.argv[1])\n"
    "c.execute('SELECT version_num FROM alembic_version').fetchall()\n"
    "c.execute('SELECT * FROM runs ORDER BY started_at DESC, id DESC LIMIT 20').fetchall()\n"
    "c.execute('SELECT run_id, verdict, count(*) FROM attempts WHERE superseded = 0 "
    "GROUP BY run_id, verdict').fetchall()\n"
)
# What any command line built by Typer costs before benchyard does anything: a one-command app with
# `runs`' options (Typer 0.2x coerces each option through a pydantic TypeAdapter it builds).
TYPER_APP = (
    "from typing import Annotated\n"
    "import typer\n"
    "app = typer.Typer(add_completion=False, rich_markup_mode=None)\n"
    "@app.callback()\n"
    "def main() -> None: pass\n"
    "@app.command()\n"
    "def runs(limit: Annotated[int, typer.Option('--limit', '-n', min=1)] = 20,\n"
    "         benchmark: Annotated[str | None, typer.Option('--benchmark')] = None,\n"
    "         format: Annotated[str, typer.Option('--format')] = 'table',\n"
    "         db: Annotated[str | None, typer.Option('--db')] = None) -> None: pass\n"
    "app()\n"
)
TYPER_REFERENCE = "reference: a one-command Typer app"
GOALS_MS = {"benchyard --help": 50, "benchyard runs": 250, "benchyard run, 1 trivial attempt": 450}
# The goals were set in seconds on a machine whose floors took 16 ms (python -c pass) and 24.5 ms
# (the sqlite3 read), medians of docs/harness-cost.md's first measures there; over those floors
# they are ratios, which hold on a slower or faster machine too.
GOAL_FLOORS_MS = {FLOOR: 16.0, READ_FLOOR: 24.5}


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
        read_file = scratch / "read.db"
        read_db = f"sqlite:///{read_file}"
        run = [*BENCHYARD, "run", str(bench), "--agent", "oracle", "-q"]
        commands = {
            FLOOR: [sys.executable, "-c", "pass"],
            READ_FLOOR: [sys.executable, "-c", SQLITE_READ, str(read_file)],
            TYPER_REFERENCE: [sys.executable, "-c", TYPER_APP, "runs", "--db", read_db],
            "benchyard --help": [*BENCHYARD, "--help"],
            "benchyard runs": [*BENCHYARD, "runs", "--db", read_db],
            "benchyard show latest": [*BENCHYARD, "show", "latest", "--db", read_db],
            "benchyard run, 1 trivial attempt": [*run, "--db", f"sqlite:///{scratch / 'run.db'}"],
        }
        floors = {
            TYPER_REFERENCE: FLOOR,
            "benchyard --help": FLOOR,
            "benchyard runs": READ_FLOOR,
            "benchyard show latest": READ_FLOOR,
            "benchyard run, 1 trivial attempt": FLOOR,
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
        walls = interleaved(measures, REPEATS)
    cpus = {label: [t.cpu for t in timings] for label, timings in cpu.items()}
    print(
        f"{'command':34} {'wall ms':>7} {'CPU ms (range)':>16}  {'CPU x its floor (range, n)':>27}"
        "  goal"
    )
    for label, values in cpus.items():
        line = f"{label:34} {statistics.median(walls[label]) * 1000:7.0f} {_ms_range(values):>16}"
        if label in floors:
            line += f"  {spread(ratios(values, cpus[floors[label]])):>27}"
            if label in GOALS_MS:
                line += "  " + _goal(label, values, cpus[floors[label]], floors[label])
        print(line)
    print(f"floors: --help and run over '{FLOOR}', runs and show over '{READ_FLOOR}'")


def _goal(label: str, values: list[float], floor: list[float], floor_label: str) -> str:
    """The goal in ms and as a ratio to the floor of the machine it was set on, each met or not:
    `450 ms: not met; x28.1: met`."""
    goal_ms = GOALS_MS[label]
    goal_ratio = goal_ms / GOAL_FLOORS_MS[floor_label]
    ms_met = statistics.median(values) * 1000 <= goal_ms
    ratio_met = statistics.median(ratios(values, floor)) <= goal_ratio
    return (
        f"{goal_ms} ms: {'met' if ms_met else 'not met'}; "
        f"x{goal_ratio:.3g}: {'met' if ratio_met else 'not met'}"
    )


def _ms_range(values: list[float]) -> str:
    """The median of seconds `values` in ms with their range: '228 (207-382)'."""
    return f"{statistics.median(values) * 1000:.0f} ({min(values) * 1000:.0f}-{max(values) * 1000:.0f})"


if __name__ == "__main__":
    main()
