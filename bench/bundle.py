"""`benchyard view-bundle`: the time and CPU of writing a static copy of two finished runs of SIZE
attempts each (bench/synthetic.py's attempts: half failed, so half of the comparison's rows differ
and get a side-by-side page), with the pages and files written. One measure per size: the copy
renders every page through the application in this process, so it is this process's CPU.
Run: .venv/bin/python bench/bundle.py  (BENCH_BUNDLE_SIZES=100,1000)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from synthetic import synthetic_attempt  # noqa: E402

# bench/queue.py would shadow the standard library's queue, which asyncio's executors import
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from tests.support import run_record  # noqa: E402

from benchyard.store.store import Store  # noqa: E402
from benchyard.web.bundle import write_bundle  # noqa: E402

SIZES = tuple(int(n) for n in os.environ.get("BENCH_BUNDLE_SIZES", "100,1000").split(","))
RUNS = ("a" * 16, "b" * 16)


def measure(size: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-bundle-") as directory:
        store = Store.open(f"sqlite:///{directory}/store.db")
        t0 = datetime(2026, 11, 1, tzinfo=UTC)
        for run_id in RUNS:
            store.create_run(run_record(run_id, planned_attempts=size, started_at=t0))
            verdicts = ("passed", "failed")
            store.record_attempts(
                [synthetic_attempt(run_id, n, verdicts[n % 2], t0) for n in range(size)]
            )
        wall, cpu = time.perf_counter(), time.process_time()
        bundle = write_bundle(store, list(RUNS), Path(directory) / "copy")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        store.close()
    attempts = size * len(RUNS)
    print(
        f"2 runs x {size} attempts: {bundle.pages} pages, {bundle.files} files, {wall:.1f} s wall, "
        f"{cpu:.1f} s CPU ({1000 * wall / attempts:.0f} ms wall per attempt)"
    )


if __name__ == "__main__":
    for size in SIZES:
        measure(size)
