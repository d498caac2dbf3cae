"""Scheduling efficiency: 500 attempts of a command agent that sleeps 1 s, at concurrency 100.

The ideal is 500 / 100 * 1 s = 5 s. Each sandbox's run (`none`: local processes, and `bwrap`) is
timed 5 times, interleaved (none, bwrap, none, ...), as the whole command, start-up included.
Prints the median wall time with its range and the median ratio to the ideal with its range; and
the run's start-up (a run of 1 attempt, less its sleep: imports, store, sandbox checks) with the
ratio left once it is taken off, which is the scheduler's and the sandbox's share. With bwrap,
also the floor: the same command in bare `bwrap` sandboxes at the same concurrency (what
bubblewrap alone costs on this machine). Each measure runs in a fresh cgroup of the bench's own
(bench/common.py: CpuCounter), and its CPU is printed beside its wall time: every process it
started, sandboxed ones included, with what RUSAGE_CHILDREN saw of it (blind inside bwrap); where
no cgroup can be made, the output says so and the CPU is RUSAGE_CHILDREN's.
benchyard's bytecode is compiled once, into a scratch PYTHONPYCACHEPREFIX, as an installed package
has it (whatever PYTHONDONTWRITEBYTECODE says).
Run: .venv/bin/python bench/concurrency.py
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from common import (
    BENCHYARD,
    Timing,
    as_installed,
    cgroup_timed,
    cpu_counter,
    interleaved,
    spread,
    trivial_benchmark,
    wall_time,
)
from sandbox import BARE_BWRAP, spawn_all

ATTEMPTS = 500
CONCURRENCY = 100
SLEEP_SEC = 1.0
REPEATS = 5
SANDBOXES = {"none": ["--sandbox", "none", "--allow-unsandboxed"], "bwrap": ["--sandbox", "bwrap"]}


def _bare_bwrap(agent: str, timings: list[Timing]) -> Callable[[], float]:
    """What bubblewrap alone costs at this concurrency: the agent's command in bare bwrap
    sandboxes, ATTEMPTS of them, CONCURRENCY at once, in one fresh cgroup with the bench process
    that spawns them."""

    def measure() -> float:
        with cpu_counter().measuring(this_process=True) as measuring:
            command = [*BARE_BWRAP, "/bin/sh", "-c", agent]
            asyncio.run(spawn_all(command, ATTEMPTS, CONCURRENCY))
        assert measuring.timing is not None
        timings.append(measuring.timing)
        return measuring.timing.wall

    return measure


def _start_up(one_attempt: list[str], timings: list[Timing]) -> Callable[[], float]:
    """The run's fixed cost: a run of one attempt, less the attempt's sleep."""
    run = cgroup_timed(one_attempt, timings)
    return lambda: run() - SLEEP_SEC


def _cpu(timings: list[Timing]) -> str:
    rusage = statistics.median(t.rusage_cpu for t in timings)
    return f"CPU s {spread([t.cpu for t in timings])} (RUSAGE_CHILDREN saw {rusage:.3g})"


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
        timings: dict[str, list[Timing]] = {}
        if "bwrap" in sandboxes:
            measures["bwrap floor"] = _bare_bwrap(agent, timings.setdefault("bwrap floor", []))
        for name, options in sandboxes.items():
            measures[name] = cgroup_timed([*run, *options], timings.setdefault(name, []))
            up = f"{name} start-up"
            measures[up] = _start_up([*run, *options, "--limit", "1"], timings.setdefault(up, []))
        values = interleaved(measures, REPEATS)
    print(
        f"{ATTEMPTS} attempts of a {SLEEP_SEC:g} s agent at concurrency {CONCURRENCY}; "
        f"ideal {ideal:.2f} s; {REPEATS} interleaved repetitions: median (range)"
    )
    print(cpu_counter().note)
    if "bwrap floor" in values:
        floor = values["bwrap floor"]
        print(
            f"bare bwrap wall {spread(floor):<24} ratio to ideal {spread([v / ideal for v in floor])}"
            f"  {_cpu(timings['bwrap floor'])}"
        )
    for name in sandboxes:
        seconds, start_up = values[name], values[f"{name} start-up"]
        print(
            f"{name:<10} wall {spread(seconds):<24} ratio to ideal "
            f"{spread([value / ideal for value in seconds]):<24} start-up {spread(start_up):<24}"
            f"ratio without start-up "
            f"{spread([(value - up) / ideal for value, up in zip(seconds, start_up, strict=True)])}"
            f"  {_cpu(timings[name])}; start-up {_cpu(timings[f'{name} start-up'])}"
        )


if __name__ == "__main__":
    main()
