"""Full-text search of a run's attempts (store/search.py, the web UI's `q=`): the one-off cost of
indexing a run on its first search, and the time of a search afterwards, as ratios to the same page
of the attempts table without one (filtered by part of the scenario id instead, a LIKE).

One run of SIZE finished attempts (bench/synthetic.py: an answer of ~180 characters, a cause on
failures, two check reasons each), written through the store API into a new SQLite store and, when
BENCH_SEARCH_PG names a PostgreSQL server, into a private schema on it. Indexing is timed once (wall
and this process's CPU: for PostgreSQL the server's own CPU is not in it). Each search is the first
page (50 rows) with its total count, median of REPEAT interleaved repetitions, with the range.
Run: .venv/bin/python bench/search.py  (BENCH_SEARCH_SIZES=10000,100000; BENCH_SEARCH_PG=postgresql://root@127.0.0.1:5432/test)
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from synthetic import synthetic_attempt  # noqa: E402

# bench/queue.py would shadow the standard library's queue, which psycopg imports
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
from tests.support import run_record  # noqa: E402

from benchyard.store.browse import AttemptQuery, attempt_page  # noqa: E402
from benchyard.store.search import ensure_indexed  # noqa: E402
from benchyard.store.store import Store  # noqa: E402

SIZES = tuple(int(n) for n in os.environ.get("BENCH_SEARCH_SIZES", "10000,100000").split(","))
REPEAT = int(os.environ.get("BENCH_SEARCH_REPEAT", "5"))
POSTGRES = os.environ.get("BENCH_SEARCH_PG", "")
VERDICTS = ("passed", "passed", "failed", "passed", "timeout", "passed", "error", "failed")
BATCH = 5_000
SEARCHES = {
    "words (half match)": AttemptQuery(search="something else"),
    "phrase (1 match)": AttemptQuery(search='"answer 4242"'),
    "prefix (all match)": AttemptQuery(search="lore*"),
}
REFERENCE = AttemptQuery(scenario="4242")


def stores() -> Iterator[tuple[str, str]]:
    """A new store of each kind, dropped once the caller moves on to the next."""
    with tempfile.TemporaryDirectory(prefix="bench-search-") as directory:
        yield "sqlite", f"sqlite:///{directory}/store.db"
    if POSTGRES:
        from tests.conftest import private_schema

        with private_schema(POSTGRES) as url:
            yield "postgresql", url


def fill(store: Store, size: int) -> str:
    run_id = f"{size:016x}"
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    store.create_run(run_record(run_id, planned_attempts=size, started_at=t0, finished_at=t0))
    for start in range(0, size, BATCH):
        store.record_attempts(
            [
                synthetic_attempt(run_id, n, VERDICTS[n % len(VERDICTS)], t0)
                for n in range(start, min(size, start + BATCH))
            ]
        )
    return run_id


def timed(work: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def measure(name: str, url: str, size: int) -> None:
    store = Store.open(url)
    run_id = fill(store, size)
    wall, cpu = timed(lambda: ensure_indexed(store, run_id))
    print(f"{name} {size:>7} attempts: index {wall:.2f} s wall, {cpu:.2f} s CPU here")
    queries = {"reference: scenario LIKE": REFERENCE, **SEARCHES}
    times: dict[str, list[float]] = {label: [] for label in queries}
    for _ in range(REPEAT):
        for label, query in queries.items():
            times[label].append(timed(lambda q=query: attempt_page(store, run_id, q))[0])
    reference = statistics.median(times["reference: scenario LIKE"])
    for label, values in times.items():
        median = statistics.median(values)
        print(
            f"  {label:<26} {median * 1000:8.1f} ms ({min(values) * 1000:.1f}-"
            f"{max(values) * 1000:.1f})  {median / reference:5.2f}x the reference"
        )
    store.close()


def main() -> None:
    for size in SIZES:
        for name, url in stores():
            measure(name, url, size)


if __name__ == "__main__":
    main()
