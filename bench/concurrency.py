"""Scheduling efficiency: 500 attempts of a command agent that sleeps 1 s, at concurrency 100.

The ideal is 500 / 100 * 1 s = 5 s. Each sandbox's run (`none`: local processes, and `bwrap`) is
timed 5 times, interleaved (none, bwrap, none, ...), as the whole command, start-up included.
Prints the median wall time with its range and the median ratio to the ideal with its range; and
the run's start-up (a run of 1 attempt, less its sleep: imports, store, sandbox checks) with the
ratio left once it is taken off, which is the scheduler's and the sandbox's share. With bwrap,
also the floor: the same command in bare `bwrap` sandboxes at the same concurrency (what
bubblewrap alone costs on this machine).
benchyard's bytecode is compiled once, into a scratch PYTHONPYCACHEPREFIX, as an installed package
has it (whatever PYTHONDONTWRITEBYTECODE says).
Run: .venv/bin/python bench/concurrency.py
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import BENCHYARD, as_installed, interleaved, spread, trivial_benchmark, wall_time
from sandbox import BARE_BWRAP, spawn_all

ATTEMPTS = 500
CONCURRENCY = 100
SLEEP_SEC = 1.0
REPEATS = 5
SANDBOXES = {"none": ["--sandbox", "none", "--allow-unsandboxed"], "bwrap": ["--sandbox", "bwrap"]}


def _timed(command: list[str]) -> Callable[[], float]:
    return lambda: wall_time(command)


def _bare_bwrap(agent: str) -> Callable[[], float]:
    """What bubblewrap alone costs at this concurrency: the agent's command in bare bwrap
    sandboxes, ATTEMPTS of them, CONCURRENCY at once."""

    def measure() -> float:
        started = time.perf_counter()
        command = [*BARE_BWRAP, "/bin/sh", "-c", agent]
        asyncio.run(spawn_all(command, ATTEMPTS, CONCURRENCY))
        return time.perf_counter() - started

    return measure


def _start_up(one_attempt: list[str]) -> Callable[[], float]:
    """The run's fixed cost: a run of one attempt, less the attempt's sleep."""
    return lambda: wall_time(one_attempt) - SLEEP_SEC


def main() -> None:
    ideal = ATTEMPTS / CONCURRENCY * SLEEP_SEC
    sandboxes = dict(SANDBOXES)
    if shutil.which("bwrap") is None:
        print("bwrap      not installed (scripts/ensure-sandboxes.sh installs it)")
        del sandboxes["bwrap"]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        as_installed(root)  # bytecode compiled in the warm-up run, not at every start
        bench = trivial_benchmark(root / "bench", ATTEMPTS)
        db = f"sqlite:///{root / 'store.db'}"
        agent = f"sleep {SLEEP_SEC:g}; echo $BENCHYARD_SCENARIO_ID"
        run = [*BENCHYARD, "run", str(bench), "--db", db, "-q"]
        wall_time([*run, "--agent", "oracle", "--limit", "1"])  # create the store
        run += ["--agent-cmd", agent, "-j", str(CONCURRENCY)]
        measures = {}
        if "bwrap" in sandboxes:
            measures["bwrap floor"] = _bare_bwrap(agent)
        for name, options in sandboxes.items():
            measures[name] = _timed([*run, *options])
            measures[f"{name} start-up"] = _start_up([*run, *options, "--limit", "1"])
        values = interleaved(measures, REPEATS)
    print(
        f"{ATTEMPTS} attempts of a {SLEEP_SEC:g} s agent at concurrency {CONCURRENCY}; "
        f"ideal {ideal:.2f} s; {REPEATS} interleaved repetitions: median (range)"
    )
    if "bwrap floor" in values:
        floor = values["bwrap floor"]
        print(
            f"bare bwrap wall {spread(floor):<24} ratio to ideal {spread([v / ideal for v in floor])}"
        )
    for name in sandboxes:
        seconds, start_up = values[name], values[f"{name} start-up"]
        print(
            f"{name:<10} wall {spread(seconds):<24} ratio to ideal "
            f"{spread([value / ideal for value in seconds]):<24} start-up {spread(start_up):<24}"
            f"ratio without start-up "
            f"{spread([(value - up) / ideal for value, up in zip(seconds, start_up, strict=True)])}"
        )


if __name__ == "__main__":
    main()
