"""Harness overhead: 1,000 and 2,000 trivial attempts with the in-process oracle, store writes included.

Each measure is taken 5 times, interleaved (floor, --help, 1,000, 2,000, floor, ...), so that a
slow spell of the machine falls on all of them alike. Prints each whole command's median wall
time (start-up included) with its range, attempts per second, and ratios against the floor
measured next to it: a bare `python -c pass` start-up. The marginal rate is 1,000 attempts over
the median of each repetition's (2,000 - 1,000) difference; when that difference is not positive
the extra attempts cost less than the noise, and it says so instead of dividing.
benchyard's bytecode is compiled once, into a scratch PYTHONPYCACHEPREFIX, as an installed package
has it (whatever PYTHONDONTWRITEBYTECODE says).
Run: .venv/bin/python bench/overhead.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
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

REPEATS = 5


def _timed(command: list[str]) -> Callable[[], float]:
    return lambda: wall_time(command)


def marginal_rate(smaller: list[float], larger: list[float], extra: int) -> str:
    """`extra` attempts over the median of each repetition's difference, or 'below noise'."""
    difference = statistics.median(big - small for small, big in zip(smaller, larger, strict=True))
    if difference <= 0:
        return "below noise (the larger run was not slower)"
    return f"{extra / difference:.0f} attempts/s"


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        as_installed(root)  # bytecode compiled in the warm-up run, not at every start
        bench = trivial_benchmark(root / "bench", 2000)
        db = f"sqlite:///{root / 'store.db'}"
        run = [*BENCHYARD, "run", str(bench), "--agent", "oracle", "--db", db, "-q", "-j", "16"]
        wall_time([*run, "--limit", "1"])  # create the store and warm the file cache
        values = interleaved(
            {
                "floor": _timed([sys.executable, "-c", "pass"]),
                "help": _timed([*BENCHYARD, "--help"]),
                "1k": _timed([*run, "--limit", "1000"]),
                "2k": _timed(run),
            },
            REPEATS,
        )
    floor = values["floor"]
    print(f"{REPEATS} interleaved repetitions: median (range) of wall seconds; ratio to the floor")
    print(f"{'floor: python -c pass':<38}{spread(floor)}")
    _row("benchyard --help", values["help"], floor)
    for name, count in (("1k", 1000), ("2k", 2000)):
        rate = f"   {count / statistics.median(values[name]):6.0f} attempts/s"
        _row(f"run, {count:,} trivial attempts (whole)", values[name], floor, rate)
    print(f"{'marginal rate (2,000 - 1,000)':<38}{marginal_rate(values['1k'], values['2k'], 1000)}")


def _row(label: str, values: list[float], floor: list[float], tail: str = "") -> None:
    print(f"{label:<38}{spread(values):<28}{spread(ratios(values, floor)):<26}x floor{tail}")


if __name__ == "__main__":
    main()
