"""Scheduling efficiency: 500 attempts of a command agent that sleeps 1 s, at concurrency 100.

The ideal is 500 / 100 * 1 s = 5 s; prints the measured wall time and its ratio to the ideal.
Run: .venv/bin/python bench/concurrency.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from common import BENCHYARD, trivial_benchmark, wall_time

ATTEMPTS = 500
CONCURRENCY = 100
SLEEP_SEC = 1.0


def main() -> None:
    ideal = ATTEMPTS / CONCURRENCY * SLEEP_SEC
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        bench = trivial_benchmark(root / "bench", ATTEMPTS)
        db = f"sqlite:///{root / 'store.db'}"
        agent = f"sleep {SLEEP_SEC:g}; echo ${{BENCHYARD_SCENARIO_ID#s0*}}"
        wall_time(
            [*BENCHYARD, "run", str(bench), "--agent", "oracle", "--db", db, "-q", "--limit", "1"]
        )
        measured = wall_time(
            [
                *BENCHYARD,
                "run",
                str(bench),
                "--agent-cmd",
                agent,
                "--db",
                db,
                "-q",
                "-j",
                str(CONCURRENCY),
            ]
        )
    print(f"{ATTEMPTS} attempts of a {SLEEP_SEC:g} s agent at concurrency {CONCURRENCY}")
    print(f"ideal {ideal:.2f} s, measured {measured:.2f} s, ratio {measured / ideal:.3f}")


if __name__ == "__main__":
    main()
