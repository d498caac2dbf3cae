"""`benchyard compare A B` on two runs of 10,000 attempts and on two of 100,000: the whole
command, in a subprocess, against a floor (BENCH_COMPARE_SIZES=10000 for the first only).

One SQLite store holds, for each size, a baseline and a candidate run written through the store
API (`Store.record_attempts`), no agent run: each attempt has two check results, a short
trajectory, an answer and output, as a real run's would. The candidate differs from the baseline
on one attempt in 16 (pass -> fail, fail -> pass, a new error, an error gone): about 300 and
3,000 pairs flip, the second past the 1,023 discordant pairs where the exact McNemar test failed.

The floor is a bare `python -c` that opens the same file with the standard library's sqlite3 and
reads, for both runs, the columns a comparison needs (scenario, epoch, category, verdict, turns,
cost, duration) of their final attempts: interpreter start-up plus the rows themselves, the least
any `compare` could cost. (`benchyard runs` would also count benchyard's own start-up, which is not
part of what has to be done, and another change is making it smaller.) The floor and `compare` are
taken in turn (interleaved), BENCH_COMPARE_REPEAT times (5); each line gives the median in seconds
with its range, and the ratio to the floor taken next to it: wall-clock time, then the CPU time
(user + system) of the command, which a busy machine disturbs less. benchyard's bytecode is
compiled once, as an installed package has it, in a warm-up run that is not measured.

The "before" figures: PYTHONPATH=/path/to/old/src .venv/bin/python bench/compare.py (the
subprocesses inherit PYTHONPATH, so `python -m benchyard` is the old code).
Run: .venv/bin/python bench/compare.py
"""

from __future__ import annotations

import sys

sys.path.append(sys.path.pop(0))  # this file's directory last: `queue` must stay the stdlib's

import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from common import BENCHYARD, OUTCOMES_FLOOR, as_installed, interleaved, ratios, spread, timed
from synthetic import synthetic_attempt

from benchyard.store.records import RunRecord
from benchyard.store.store import Store

SIZES = tuple(int(n) for n in os.environ.get("BENCH_COMPARE_SIZES", "10000,100000").split(","))
REPEAT = int(os.environ.get("BENCH_COMPARE_REPEAT", "5"))
BATCH = 5_000
VERDICTS = ("passed", "passed", "failed", "passed", "timeout", "passed", "error", "passed")
CHANGES = {0: "failed", 2: "passed", 4: "error", 6: "passed"}  # n % 64 -> the candidate's verdict


def _verdict(n: int, candidate: bool) -> str:
    """The baseline's verdicts cycle through VERDICTS; the candidate changes four in 64: a pass
    that fails, a failure that passes, a timeout that errs and an error that passes."""
    verdict = VERDICTS[n % len(VERDICTS)]
    if candidate and n % 64 in CHANGES:
        return CHANGES[n % 64]
    return verdict


def _run(run_id: str, size: int, started_at: datetime) -> RunRecord:
    return RunRecord(
        id=run_id,
        status="finished",
        benchmark_name="bench-compare",
        benchmark_version="1",
        benchmark_hash="sha256:00",
        benchmark_path="/nowhere",
        agent_name="bench",
        agent_config={"kind": "command"},
        settings={"epochs": 1},
        benchyard_version="0",
        host="bench",
        started_at=started_at,
        finished_at=started_at + timedelta(minutes=30),
        planned_attempts=size,
    )


def fill(url: str, sizes: tuple[int, ...] = SIZES) -> dict[int, tuple[str, str]]:
    """For each size, the ids of its baseline and its candidate."""
    store = Store.open(url)
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    made = {}
    for index, size in enumerate(sizes):
        pair = []
        for side, candidate in enumerate((False, True)):
            run_id = f"{2 * index + side + 1:02x}".ljust(16, "0")
            store.create_run(_run(run_id, size, t0 + timedelta(hours=2 * index + side)))
            for start in range(0, size, BATCH):
                store.record_attempts(
                    [
                        synthetic_attempt(run_id, n, _verdict(n, candidate), t0)
                        for n in range(start, min(size, start + BATCH))
                    ]
                )
            pair.append(run_id)
        made[size] = (pair[0], pair[1])
    store.close()
    return made


def measure(url: str, path: Path, size: int, runs: tuple[str, str], workdir: Path) -> None:
    commands = {
        "floor": [sys.executable, "-c", OUTCOMES_FLOOR, str(path), *runs],
        "compare": [*BENCHYARD, "compare", *runs, "--db", url],
        "compare --format json": [*BENCHYARD, "compare", *runs, "--db", url, "--format", "json"],
    }
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    timed(commands["compare"], [], workdir)()  # warm-up: bytecode compiled, the file cached
    wall = interleaved(
        {name: timed(command, cpu[name], workdir) for name, command in commands.items()}, REPEAT
    )
    print(f"\ntwo runs of {size:,} attempts: seconds, median (min-max, n); x the floor")
    for label, values in (("wall", wall), ("CPU", cpu)):
        for name, seconds in values.items():
            ratio = "" if name == "floor" else f"   x{spread(ratios(seconds, values['floor']))}"
            print(f"  {label:<5}{name:<24}{spread(seconds)}{ratio}")


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        as_installed(root)
        path = root / "bench.db"
        url = f"sqlite:///{path}"
        started = time.perf_counter()
        made = fill(url)
        total = 2 * sum(SIZES)
        print(f"filled {total:,} attempts in {time.perf_counter() - started:.0f} s")
        for size, runs in made.items():
            measure(url, path, size, runs, root)


if __name__ == "__main__":
    main()
