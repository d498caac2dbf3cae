"""Sandbox overhead: 500 trivial code attempts in the bwrap sandbox against the floor, 500 bare
`bwrap ... python3 -c pass` spawns, both at the same concurrency and measured in the same run.

A trivial attempt is a command agent that runs `python3 -c` to print its answer: one sandboxed
Python start-up per attempt, plus everything benchyard does around it (workdir, protocol files,
per-attempt cgroup, grading, store writes) and the run's own start-up. Prints attempts per second
of both and their ratio.
Run: .venv/bin/python bench/sandbox.py
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import BENCHYARD, trivial_benchmark, wall_time

ATTEMPTS = 500
CONCURRENCY = 8
PYTHON = os.path.realpath(sys.executable)  # the interpreter itself, not a shim or venv link
BARE_BWRAP = [
    *("bwrap", "--unshare-all", "--unshare-user", "--uid", "1000", "--gid", "1000"),
    *("--die-with-parent", "--new-session", "--ro-bind", "/", "/"),
    *("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"),
]


async def _spawn_all(argv: list[str], count: int, concurrency: int) -> None:
    limit = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with limit:
            process = await asyncio.create_subprocess_exec(*argv)
            if await process.wait() != 0:
                raise SystemExit(f"the floor's spawn failed: {argv}")

    await asyncio.gather(*(one() for _ in range(count)))


def floor_sec() -> float:
    started = time.perf_counter()
    asyncio.run(_spawn_all([*BARE_BWRAP, PYTHON, "-c", "pass"], ATTEMPTS, CONCURRENCY))
    return time.perf_counter() - started


def main() -> None:
    agent = f"{PYTHON} -c \"import os; print(int(os.environ['BENCHYARD_SCENARIO_ID'][1:]))\""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        bench = trivial_benchmark(root / "bench", ATTEMPTS)
        db = f"sqlite:///{root / 'store.db'}"
        run = [*BENCHYARD, "run", str(bench), "--agent-cmd", agent, "--db", db, "-q"]
        wall_time([*run, "--limit", "1"])  # create the store and warm the file cache
        floor = floor_sec()
        measured = wall_time([*run, "--sandbox", "bwrap", "-j", str(CONCURRENCY)])
        report = subprocess.run(
            [*BENCHYARD, "report", "latest", "--format", "json", "--db", db],
            capture_output=True,
            text=True,
            check=True,
        )
    passed = json.loads(report.stdout)["summary"]["passed"]
    if passed != ATTEMPTS:
        raise SystemExit(f"only {passed} of {ATTEMPTS} attempts passed: the figures mean nothing")
    print(f"{ATTEMPTS} attempts at concurrency {CONCURRENCY}")
    print(f"floor: bare bwrap + python -c pass   {floor:7.2f} s   {ATTEMPTS / floor:7.1f} /s")
    print(
        f"benchyard run, bwrap sandbox         {measured:7.2f} s   {ATTEMPTS / measured:7.1f} /s"
        f"   ratio {measured / floor:.2f}"
    )


if __name__ == "__main__":
    main()
