"""Scheduling efficiency: 500 attempts of a command agent that sleeps 1 s, at concurrency 100.

The ideal is 500 / 100 * 1 s = 5 s; prints each sandbox's measured wall time (the whole command,
start-up included) and its ratio to the ideal: `none` (local processes) and `bwrap`.
Run: .venv/bin/python bench/concurrency.py
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from common import BENCHYARD, trivial_benchmark, wall_time

ATTEMPTS = 500
CONCURRENCY = 100
SLEEP_SEC = 1.0
SANDBOXES = {"none": ["--sandbox", "none", "--allow-unsandboxed"], "bwrap": ["--sandbox", "bwrap"]}


def main() -> None:
    ideal = ATTEMPTS / CONCURRENCY * SLEEP_SEC
    print(
        f"{ATTEMPTS} attempts of a {SLEEP_SEC:g} s agent at concurrency {CONCURRENCY}; ideal {ideal:.2f} s"
    )
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        bench = trivial_benchmark(root / "bench", ATTEMPTS)
        db = f"sqlite:///{root / 'store.db'}"
        agent = f"sleep {SLEEP_SEC:g}; echo $BENCHYARD_SCENARIO_ID"
        run = [*BENCHYARD, "run", str(bench), "--db", db, "-q"]
        wall_time([*run, "--agent", "oracle", "--limit", "1"])  # create the store
        for name, options in SANDBOXES.items():
            if name == "bwrap" and shutil.which("bwrap") is None:
                print("bwrap      not installed (scripts/ensure-sandboxes.sh installs it)")
                continue
            measured = wall_time([*run, "--agent-cmd", agent, "-j", str(CONCURRENCY), *options])
            print(f"{name:<10} measured {measured:6.2f} s   ratio {measured / ideal:.3f}")


if __name__ == "__main__":
    main()
