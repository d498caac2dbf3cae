"""Harness overhead: 1,000 and 2,000 trivial attempts with the in-process oracle, store writes included.

Prints each whole command's wall time (start-up included), attempts per second, and ratios against
the floor measured in the same run: a bare `python -c pass` start-up.
Run: .venv/bin/python bench/overhead.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from common import BENCHYARD, trivial_benchmark, wall_time

REPEAT = 3


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        bench = trivial_benchmark(root / "bench", 2000)
        db = f"sqlite:///{root / 'store.db'}"
        run = [*BENCHYARD, "run", str(bench), "--agent", "oracle", "--db", db, "-q", "-j", "16"]
        wall_time([*run, "--limit", "1"])  # create the store and warm the file cache
        floor = wall_time([sys.executable, "-c", "pass"], REPEAT)
        help_time = wall_time([*BENCHYARD, "--help"], REPEAT)
        one_k = wall_time([*run, "--limit", "1000"], REPEAT)
        two_k = wall_time(run, REPEAT)
    print(f"floor: python -c pass                  {floor:7.3f} s")
    print(
        f"benchyard --help                       {help_time:7.3f} s   {help_time / floor:6.1f}x floor"
    )
    print(
        f"run, 1,000 trivial attempts (whole)    {one_k:7.3f} s   {one_k / floor:6.1f}x floor"
        f"   {1000 / one_k:8.0f} attempts/s"
    )
    print(
        f"run, 2,000 trivial attempts (whole)    {two_k:7.3f} s   {two_k / floor:6.1f}x floor"
        f"   {2000 / two_k:8.0f} attempts/s"
    )
    print(
        f"marginal rate (2,000 - 1,000)          {1000 / max(two_k - one_k, 1e-9):8.0f} attempts/s"
    )


if __name__ == "__main__":
    main()
