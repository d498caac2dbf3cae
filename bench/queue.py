"""Queue throughput: 10,000 queued trivial attempts (the in-process oracle) drained by 1 and by 3
`benchyard worker --drain` processes, on SQLite and on PostgreSQL.

Each figure is attempts per second over the workers' whole wall time (start-up, claims, leases,
writes), printed with its ratio to the baseline measured in the same run on the same database: the
same 10,000 attempts run inline by `benchyard run` (which enqueues them already claimed, so it
skips the claims). PostgreSQL is the suite's server (BENCHYARD_BENCH_PG, default
postgresql://root@127.0.0.1:5432/test), in a schema of its own that is dropped afterwards.
Run: .venv/bin/python bench/queue.py
"""

from __future__ import annotations

import sys

sys.path.append(sys.path.pop(0))  # this file's directory last: `queue` must stay the stdlib's

import itertools
import os
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from common import BENCHYARD, trivial_benchmark, wall_time

ATTEMPTS = 10_000
CONCURRENCY = "16"
PG_URL = os.environ.get("BENCHYARD_BENCH_PG", "postgresql://root@127.0.0.1:5432/test")


def sqlite_stores(root: Path) -> Iterator[str]:
    """Fresh SQLite files under `root`."""
    for number in itertools.count():
        yield f"sqlite:///{root / f'store-{number}.db'}"


@contextmanager
def postgres_stores() -> Iterator[Iterator[str]]:
    """Fresh schemas in the PostgreSQL database, each dropped afterwards."""
    from sqlalchemy import create_engine, text

    from benchyard.store.engine import with_driver

    admin = create_engine(with_driver(PG_URL))
    made: list[str] = []

    def fresh() -> Iterator[str]:
        while True:
            schema = f"bench_{uuid.uuid4().hex[:10]}"
            with admin.begin() as connection:
                connection.execute(text(f"CREATE SCHEMA {schema}"))
            made.append(schema)
            yield f"{PG_URL}?options=-csearch_path%3D{schema}"

    try:
        yield fresh()
    finally:
        with admin.begin() as connection:
            for schema in made:
                connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def inline_rate(bench: Path, url: str) -> float:
    command = [*BENCHYARD, "run", str(bench), "--agent", "oracle", "--db", url, "-q"]
    return ATTEMPTS / wall_time([*command, "-j", CONCURRENCY])


def drained_rate(bench: Path, url: str, workers: int) -> float:
    """Enqueue the run (not timed), then time `workers` worker processes draining it."""
    enqueue = [*BENCHYARD, "run", str(bench), "--agent", "oracle", "--db", url, "--enqueue"]
    subprocess.run(enqueue, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    drain = [*BENCHYARD, "worker", "--drain", "-j", CONCURRENCY, "--db", url]
    started = time.perf_counter()
    processes = [subprocess.Popen(drain, stderr=subprocess.DEVNULL) for _ in range(workers)]
    if any(process.wait() != 0 for process in processes):
        raise SystemExit("a worker failed")
    seconds = time.perf_counter() - started
    check_all_recorded(url)
    return ATTEMPTS / seconds


def check_all_recorded(url: str) -> None:
    from benchyard.store.store import Store

    store = Store.open(url)
    run = store.resolve_run("latest")
    recorded = len(store.attempts(run.id))
    store.close()
    if run.status != "finished" or recorded != ATTEMPTS:
        raise SystemExit(f"run {run.id}: {run.status}, {recorded} of {ATTEMPTS} attempts recorded")


def measure(label: str, bench: Path, urls: Iterator[str]) -> None:
    wall_time([*BENCHYARD, "run", str(bench), "--agent", "oracle", "--db", next(urls), "-q"])
    baseline = inline_rate(bench, next(urls))
    print(f"{label:<10} inline run (baseline)      {baseline:8.0f} attempts/s")
    for workers in (1, 3):
        rate = drained_rate(bench, next(urls), workers)
        print(
            f"{label:<10} queue, {workers} worker{'s' if workers > 1 else ' '}         "
            f"{rate:8.0f} attempts/s   {rate / baseline:5.2f}x baseline"
        )


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        bench = trivial_benchmark(root / "bench", ATTEMPTS)
        measure("sqlite", bench, sqlite_stores(root))
        try:
            with postgres_stores() as urls:
                measure("postgresql", bench, urls)
        except Exception as error:  # no server: say so, keep the SQLite figures
            print(
                f"postgresql not measured ({PG_URL}): {str(error).splitlines()[0]}", file=sys.stderr
            )


if __name__ == "__main__":
    main()
