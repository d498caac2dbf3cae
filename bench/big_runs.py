"""The read commands on a big run (issue 27, item 1): `show`, `report` (table and --format json),
`history` and `compare` on a store holding two runs of BENCH_BIG_SIZE (100,000) attempts, each
command's CPU seconds and peak memory against a floor measured next to it.

The store is bench/compare.py's (`fill`): a baseline and a candidate of the same benchmark written
through the store API, each attempt with two check results, a short trajectory, an answer and
output; 3 in 8 attempts did not pass, a quarter are `long` for review. The floors are
bench/compare.py's: a bare `python -c` that reads with the standard library's sqlite3 the columns
a run's figures need (scenario, epoch, category, verdict, turns, cost, duration) of its final
attempts, for one run (the floor of `show` and `report`) or both (of `history` and `compare`):
interpreter start-up and the rows, the least any of these commands could cost. Commands and
floors are taken in turn (interleaved), BENCH_BIG_REPEAT times (3), all of them or those named in
BENCH_BIG_COMMANDS (`compare`, or `show,report`: the floors are always taken); each line gives the median
with its range and its ratio to its floor taken in the same repetition: CPU (user + system, from
os.wait4 of the command: none of these commands starts a sandbox, so its own rusage sees all of
its CPU) and peak RSS (its ru_maxrss). Wall time is left out: on a loaded machine it says more
about the load than about the command. benchyard's bytecode is compiled once, as an installed
package has it, in a warm-up run.

The "before" figures: PYTHONPATH=/path/to/old/src .venv/bin/python bench/big_runs.py (the
commands inherit PYTHONPATH).
Run: .venv/bin/python bench/big_runs.py
"""

from __future__ import annotations

import sys

sys.path.append(sys.path.pop(0))  # this file's directory last: `queue` must stay the stdlib's

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import BENCHYARD, OUTCOMES_FLOOR, as_installed, ratios, spread

SIZE = int(os.environ.get("BENCH_BIG_SIZE", "100000"))
REPEAT = int(os.environ.get("BENCH_BIG_REPEAT", "3"))
# Only these commands (comma-separated names, e.g. "compare"; their floors are always taken).
ONLY = [name for name in os.environ.get("BENCH_BIG_COMMANDS", "").split(",") if name]


class Figures:
    """One command's CPU seconds and peak RSS (MiB), a value per repetition."""

    def __init__(self) -> None:
        self.cpu: list[float] = []
        self.rss: list[float] = []


def measure(command: list[str], figures: Figures, cwd: Path) -> Callable[[], None]:
    """A measure: one run of `command` (which must succeed), its CPU and peak RSS appended."""

    def run() -> None:
        child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(command)} exited {os.waitstatus_to_exitcode(status)}")
        figures.cpu.append(usage.ru_utime + usage.ru_stime)
        figures.rss.append(usage.ru_maxrss / 1024)

    return run


def commands(path: Path, runs: tuple[str, str]) -> dict[str, tuple[list[str], str]]:
    """Each measured command with the floor it is compared with."""
    db = ["--db", f"sqlite:///{path}"]
    one, two = "floor: one run", "floor: both runs"
    every = {
        one: ([sys.executable, "-c", OUTCOMES_FLOOR, str(path), runs[1]], one),
        two: ([sys.executable, "-c", OUTCOMES_FLOOR, str(path), *runs], two),
        "show": ([*BENCHYARD, "show", runs[1], *db], one),
        "report": ([*BENCHYARD, "report", runs[1], *db], one),
        "report --format json": ([*BENCHYARD, "report", runs[1], "--format", "json", *db], one),
        "history": ([*BENCHYARD, "history", "bench-compare", *db], two),
        "compare": ([*BENCHYARD, "compare", *runs, *db], two),
    }
    unknown = sorted(set(ONLY) - every.keys())
    if unknown:
        raise SystemExit(f"BENCH_BIG_COMMANDS: no command {', '.join(unknown)}")
    return {
        name: measured
        for name, measured in every.items()
        if not ONLY or name in ONLY or name.startswith("floor")
    }


def _filled(path: Path) -> tuple[str, str]:
    """The store filled by another process, its two run ids: this one stays small, as a command
    it starts takes its peak RSS with it (Linux counts the parent's memory, copied at the fork,
    in the child's ru_maxrss), and the floors' and `show`'s peaks would be this process's."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from compare import fill; "
        "print(*fill(sys.argv[2], (int(sys.argv[3]),))[int(sys.argv[3])])"
    )
    argv = [sys.executable, "-c", code, str(Path(__file__).parent), f"sqlite:///{path}", str(SIZE)]
    done = subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True)
    baseline, candidate = done.stdout.split()
    return baseline, candidate


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        as_installed(root)
        path = root / "bench.db"
        started = time.perf_counter()
        runs = _filled(path)
        print(f"filled two runs of {SIZE:,} attempts in {time.perf_counter() - started:.0f} s")
        chosen = commands(path, runs)
        figures = {name: Figures() for name in chosen}
        measures = {name: measure(argv, figures[name], root) for name, (argv, _) in chosen.items()}
        warm_up = next(argv for name, (argv, _) in chosen.items() if not name.startswith("floor"))
        measure(warm_up, Figures(), root)()  # bytecode compiled, the file cached
        for _ in range(REPEAT):
            for run in measures.values():
                run()
    print(f"median (min-max, n) of {REPEAT} interleaved repetitions; x its floor, per repetition")
    print(f"{'':22}{'CPU s':>24}{'x floor':>24}{'peak MiB':>24}{'x floor':>24}")
    for name, (_, floor) in chosen.items():
        mine, base = figures[name], figures[floor]
        line = f"{name:22}{spread(mine.cpu):>24}"
        line += f"{'' if name == floor else 'x' + spread(ratios(mine.cpu, base.cpu)):>24}"
        line += f"{spread(mine.rss):>24}"
        line += f"{'' if name == floor else 'x' + spread(ratios(mine.rss, base.rss)):>24}"
        print(line)
    print(f"goal (issue 27): each command <= 2 s CPU and <= 150 MiB; medians: {_verdict(figures)}")


def _verdict(figures: dict[str, Figures]) -> str:
    over = [
        name
        for name, found in figures.items()
        if not name.startswith("floor")
        and (statistics.median(found.cpu) > 2 or statistics.median(found.rss) > 150)
    ]
    return "all within" if not over else "over: " + ", ".join(over)


if __name__ == "__main__":
    main()
