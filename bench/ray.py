"""The Ray executor against the local one, on a real two-node Ray cluster started on this machine
(two `ray start` processes, 4 logical CPUs each), with one PostgreSQL store.

1. Throughput of a latency-bound benchmark: 96 attempts of a command agent that sleeps 1 s, in
   bwrap, run by `benchyard run` on the local executor (-j 4), on the Ray executor pinned to one
   node (-j 4; the attempts ask for that node's own resource) and on the Ray executor over both
   nodes (-j 8). Each figure is attempts per second from the first attempt's start to the last
   one's end (sandbox, agent, grading, writes), with the ratios to the local executor; the ideal
   is 4/s on one node and 8/s on two. What comes before is given apart: the warm-up (the run
   recorded to its first attempt started: for Ray, its worker processes started on the nodes,
   each importing benchyard, unpacking the run and opening its sandbox) and the command's own
   start-up (Python, the store, joining the cluster).
2. Per-attempt overhead of the Ray path: 200 trivial attempts (the in-process oracle: no sandbox,
   no agent process) one at a time (-j 1) on each executor, seconds per attempt after the first
   started; the difference is what one Ray try adds (a task submitted, placed, started, its
   record back).

Every configuration runs REPEATS times, interleaved (local, ray 1 node, ray 2 nodes, local, ...),
so that a busy moment of the machine hits them alike; each figure is the median with the range
of the repetitions. PostgreSQL is BENCHYARD_BENCH_PG (default the test server), in a schema of its
own, dropped afterwards.
Run: .venv/bin/python bench/ray.py
"""

from __future__ import annotations

import sys

sys.path.append(sys.path.pop(0))  # this file's directory last: `ray` must stay Ray's

import os
import statistics
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from common import BENCHYARD, trivial_benchmark

from benchyard.executors.ray.local_cluster import local_cluster

PG_URL = os.environ.get("BENCHYARD_BENCH_PG", "postgresql://root@127.0.0.1:5432/test")
REPEATS = int(os.environ.get("BENCH_REPEATS", "5"))
SLOW_ATTEMPTS = 96
SLEEP_SEC = 1.0
TRIVIAL_ATTEMPTS = 200
CPUS_PER_NODE = 4


@contextmanager
def postgres_store() -> Iterator[str]:
    from sqlalchemy import create_engine, text

    from benchyard.store.engine import with_driver

    admin = create_engine(with_driver(PG_URL))
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with admin.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{PG_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as connection:
            connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def pinned(bench: Path, resource: str) -> Path:
    """A copy of the benchmark whose attempts ask for `resource` (one node's own)."""
    copy = bench.with_name(bench.name + "-pinned")
    subprocess.run(["cp", "-r", str(bench), str(copy)], check=True)
    manifest = copy / "benchmark.yaml"
    manifest.write_text(
        manifest.read_text() + f"defaults:\n  resources: {{{resource}: 1}}\n", encoding="utf-8"
    )
    return copy


def timed_run(command: list[str], url: str, env: dict[str, str]) -> tuple[float, float, float, int]:
    """Run `benchyard run ... -q`: the first attempt's start to the last one's end, the warm-up
    (the run's start to its first attempt's), the rest of the command's wall time, attempts."""
    from benchyard.store.store import Store

    started = time.perf_counter()
    done = subprocess.run([*command, "--db", url, "-q"], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    store = Store.open(url)
    run = store.resolve_run("latest")
    tries = store.attempts(run.id)
    store.close()
    if run.status != "finished" or run.finished_at is None or not tries:
        raise SystemExit(f"run {run.id} ended {run.status}")
    first = min(t.started_at for t in tries)
    last = max(t.finished_at for t in tries)
    span = (last - first).total_seconds()
    warm_up = (first - run.started_at).total_seconds()
    recorded = (run.finished_at - run.started_at).total_seconds()
    return span, warm_up, wall - recorded, len(tries)


def spread(values: list[float], unit: str, scale: float = 1.0) -> str:
    shown = [value * scale for value in values]
    return f"{statistics.median(shown):8.2f} {unit} (range {min(shown):.2f}-{max(shown):.2f})"


def main() -> None:
    nodes = {
        "head": (CPUS_PER_NODE, {"head_node": float(CPUS_PER_NODE)}),
        "b": (CPUS_PER_NODE, {"b_node": float(CPUS_PER_NODE)}),
    }
    with (
        tempfile.TemporaryDirectory() as scratch,
        postgres_store() as url,
        local_cluster(nodes, object_store_mb=100) as cluster,
    ):
        root = Path(scratch)
        env = {**os.environ, **cluster.client_env}
        slow = trivial_benchmark(root / "slow", SLOW_ATTEMPTS, name="slow")
        slow_on_head = pinned(slow, "head_node")
        trivial = trivial_benchmark(root / "trivial", TRIVIAL_ATTEMPTS, name="trivial")
        agent = ["--agent-cmd", f"sleep {SLEEP_SEC:g}; echo $BENCHYARD_SCENARIO_ID"]
        ray = ["--executor", "ray", "--ray-address", cluster.address]
        run = [*BENCHYARD, "run"]
        slow_runs = {
            "local executor, -j 4": [*run, str(slow), *agent, "-j", "4"],
            "ray, 1 node, -j 4": [*run, str(slow_on_head), *agent, *ray, "-j", "4"],
            "ray, 2 nodes, -j 8": [*run, str(slow), *agent, *ray, "-j", "8"],
        }
        trivial_runs = {
            "local executor": [*run, str(trivial), "--agent", "oracle", "-j", "1"],
            "ray executor": [*run, str(trivial), "--agent", "oracle", *ray, "-j", "1"],
        }
        timed_run([*run, str(trivial), "--agent", "oracle", *ray, "--limit", "2"], url, env)
        rates: dict[str, list[float]] = {name: [] for name in slow_runs}
        warm_ups: dict[str, list[float]] = {name: [] for name in slow_runs}
        startup: dict[str, list[float]] = {name: [] for name in slow_runs}
        per_attempt: dict[str, list[float]] = {name: [] for name in trivial_runs}
        trivial_warm_ups: dict[str, list[float]] = {name: [] for name in trivial_runs}
        for repeat in range(REPEATS):
            for name, command in slow_runs.items():
                span, warm_up, rest, attempts = timed_run(command, url, env)
                assert attempts == SLOW_ATTEMPTS, (name, attempts)
                rates[name].append(attempts / span)
                warm_ups[name].append(warm_up)
                startup[name].append(rest)
            for name, command in trivial_runs.items():
                span, warm_up, _, attempts = timed_run(command, url, env)
                per_attempt[name].append(span / attempts)
                trivial_warm_ups[name].append(warm_up)
            print(f"repetition {repeat + 1}/{REPEATS} done", file=sys.stderr)

    print(
        f"{SLOW_ATTEMPTS} attempts of a {SLEEP_SEC:g} s agent in bwrap; {REPEATS} interleaved "
        f"repetitions, median (range); ideal 4/s on one node, 8/s on two"
    )
    local = statistics.median(rates["local executor, -j 4"])
    for name, values in rates.items():
        ratio = statistics.median(values) / local
        print(f"  {name:<22} {spread(values, 'attempts/s')}  {ratio:5.2f}x local")
        print(
            f"  {'':<22} warm-up {spread(warm_ups[name], 's')}, "
            f"command start-up {spread(startup[name], 's')}"
        )
    one, two = (statistics.median(rates[n]) for n in list(rates)[1:])
    print(f"  ray: 2 nodes / 1 node {two / one:5.2f}x")
    print(f"{TRIVIAL_ATTEMPTS} trivial attempts (oracle) one at a time")
    for name, values in per_attempt.items():
        print(
            f"  {name:<22} {spread(values, 'ms per attempt', 1000)}, "
            f"warm-up {spread(trivial_warm_ups[name], 's')}"
        )
    overhead = [
        (ray_value - local_value) * 1000
        for ray_value, local_value in zip(
            per_attempt["ray executor"], per_attempt["local executor"], strict=True
        )
    ]
    print(f"  Ray path adds          {spread(overhead, 'ms per attempt')}")


if __name__ == "__main__":
    main()
