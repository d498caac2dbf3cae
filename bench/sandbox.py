"""Sandbox overhead: 200 trivial attempts in the bwrap sandbox against the floor, 200 bare bwrap
spawns of the same command, both at the same concurrency, interleaved over 5 repetitions.

A trivial attempt is a command agent that runs a light `python3 -I -S -c` (no site, no .pth
files) to print its answer: one sandboxed Python start-up per attempt, plus everything benchyard
does around it (workdir, protocol files, per-attempt cgroup, grading, store writes) and the run's
own start-up. The floor runs the very same `/bin/sh -c` command line in a bare `bwrap` (the whole
host bound at once), so that any difference is benchyard's own work, not a heavier interpreter.
`--sandbox none` is measured beside them.

Prints, per measure, the median wall time with its range, the median ratio to the floor measured
next to it, and the harness's overhead per attempt: (run - floor) / attempts, in ms of wall time
at this concurrency; then the same for bwrap with the run's start-up taken off (a run of 1
attempt: imports, store, the sandbox's checks), which leaves the per-attempt work.
benchyard's bytecode is compiled once, into a scratch PYTHONPYCACHEPREFIX, as an installed package
has it (whatever PYTHONDONTWRITEBYTECODE says).
Run: .venv/bin/python bench/sandbox.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import (
    BENCHYARD,
    as_installed,
    interleaved,
    ratios,
    spread,
    trivial_benchmark,
    wall_time,
)

ATTEMPTS = 200
CONCURRENCY = 8
REPEATS = 5
# The system's interpreter without site: a venv's or pyenv's .pth files cost ~50 ms per start.
AGENT = (
    "/usr/bin/python3 -I -S -c \"import os; print(int(os.environ['BENCHYARD_SCENARIO_ID'][1:]))\""
)
BARE_BWRAP = [
    *("bwrap", "--unshare-all", "--unshare-user", "--uid", "1000", "--gid", "1000"),
    *("--die-with-parent", "--new-session", "--ro-bind", "/", "/"),
    *("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"),
]
FLOOR_ENV = {"PATH": "/usr/bin:/bin", "BENCHYARD_SCENARIO_ID": "s00001"}


async def spawn_all(argv: list[str], count: int, concurrency: int) -> None:
    """Start `argv` `count` times, `concurrency` at once; a failed one stops the bench."""
    limit = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with limit:
            process = await asyncio.create_subprocess_exec(
                *argv, env=FLOOR_ENV, stdout=subprocess.PIPE
            )
            await process.communicate()
            if process.returncode != 0:
                raise SystemExit(f"the floor's spawn failed: {argv}")

    await asyncio.gather(*(one() for _ in range(count)))


def floor_sec() -> float:
    started = time.perf_counter()
    asyncio.run(spawn_all([*BARE_BWRAP, "/bin/sh", "-c", AGENT], ATTEMPTS, CONCURRENCY))
    return time.perf_counter() - started


def benchyard_run(run: list[str], db: str) -> Callable[[], float]:
    """A measure: the whole `run` command's wall time, refused unless every attempt passed."""

    def measure() -> float:
        seconds = wall_time(run)
        report = subprocess.run(
            [*BENCHYARD, "report", "latest", "--format", "json", "--db", db],
            capture_output=True,
            text=True,
            check=True,
        )
        passed = json.loads(report.stdout)["summary"]["passed"]
        if passed != ATTEMPTS:
            raise SystemExit(
                f"only {passed} of {ATTEMPTS} attempts passed: the figures mean nothing"
            )
        return seconds

    return measure


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        as_installed(root)  # bytecode compiled in the warm-up run, not at every start
        bench = trivial_benchmark(root / "bench", ATTEMPTS)
        db = f"sqlite:///{root / 'store.db'}"
        run = [*BENCHYARD, "run", str(bench), "--agent-cmd", AGENT, "--db", db, "-q"]
        run += ["-j", str(CONCURRENCY)]
        wall_time([*run, "--limit", "1"])  # create the store and warm the file cache
        values = interleaved(
            {
                "floor": floor_sec,
                "bwrap": benchyard_run([*run, "--sandbox", "bwrap"], db),
                "start-up": lambda: wall_time([*run, "--sandbox", "bwrap", "--limit", "1"]),
                "none": benchyard_run([*run, "--sandbox", "none", "--allow-unsandboxed"], db),
            },
            REPEATS,
        )
    print(f"{ATTEMPTS} attempts at concurrency {CONCURRENCY}, {REPEATS} interleaved repetitions")
    print(f"agent and floor command: {AGENT}")
    print("                                 wall s (median, range)        ratio to floor")
    print(f"floor: bare bwrap + the command  {spread(values['floor']):<28}")
    for name in ("bwrap", "none"):
        print(
            f"benchyard run, --sandbox {name:<6}  {spread(values[name]):<28}  "
            f"{spread(ratios(values[name], values['floor'])):<24}  "
            f"overhead {_overhead_ms(values[name], values['floor']):+.1f} ms/attempt"
        )
    print(f"bwrap over none: {spread(ratios(values['bwrap'], values['none']))}")
    start_up = values["start-up"]
    without = [run - up for run, up in zip(values["bwrap"], start_up, strict=True)]
    print(
        f"start-up (a run of 1 attempt in bwrap): {spread(start_up)}; without it, bwrap's ratio "
        f"{spread(ratios(without, values['floor']))}, "
        f"overhead {_overhead_ms(without, values['floor']):+.1f} ms/attempt"
    )


def _overhead_ms(values: list[float], floors: list[float]) -> float:
    """The median of each repetition's (run - floor) per attempt, in ms."""
    return statistics.median(
        (value - floor) / ATTEMPTS * 1000 for value, floor in zip(values, floors, strict=True)
    )


if __name__ == "__main__":
    main()
