"""Web UI: server time of a run's page and of one attempt's drawer at 100, 10,000 and 100,000
attempts, as ratios to the 100-attempt page, and the server's peak memory.

One SQLite store holds three finished runs (100, 10,000 and 100,000 attempts, two check results
each, a short trajectory, answer and output), written through the store API. Each repetition
starts a fresh `benchyard serve --read-only` process and asks, for each run in turn (interleaved):
the run page (cold: the first view of the run since the server started; then warm: the figures of a
run that ended are remembered), the run page sorted by duration, the run page filtered to failures,
and the drawer of an attempt in the middle of the run. Server time is the server's own
`Server-Timing` header (request in to response start). Medians of REPEAT repetitions, with their
spread (min-max). Peak RSS is the server process's VmHWM after its repetition.

The store is at head: the index the default order, the failures and the drawer want
(ix_attempts_run_final, migration 0005) is there.
Run: .venv/bin/python bench/web.py  (BENCH_WEB_SIZES=100,10000 for a quicker look)
"""

from __future__ import annotations

import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from synthetic import synthetic_attempt  # noqa: E402
from tests.support import run_record  # noqa: E402

from benchyard.store.store import Store  # noqa: E402

SIZES = tuple(int(n) for n in os.environ.get("BENCH_WEB_SIZES", "100,10000,100000").split(","))
REPEAT = int(os.environ.get("BENCH_WEB_REPEAT", "5"))
BATCH = 5_000
WARM_UP = 10
VERDICTS = ("passed", "passed", "failed", "passed", "timeout", "passed", "error", "failed")
TIMING = re.compile(r"dur=([0-9.]+)")


def fill(url: str) -> dict[int, tuple[str, str]]:
    """The runs; for each size, its run id and the id of an attempt in its middle (size 10 is the
    warm-up run each server is first asked about, so that no figure carries its start-up)."""
    store = Store.open(url)
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    made = {}
    for index, size in enumerate((WARM_UP, *SIZES)):
        run_id = f"{index + 1:016x}"
        store.create_run(
            run_record(
                run_id,
                benchmark_name="bench-web",
                started_at=t0 + timedelta(hours=index),
                finished_at=t0 + timedelta(hours=index, minutes=30),
                planned_attempts=size,
            )
        )
        for start in range(0, size, BATCH):
            store.record_attempts(
                [
                    synthetic_attempt(run_id, n, VERDICTS[n % len(VERDICTS)], t0)
                    for n in range(start, min(size, start + BATCH))
                ]
            )
        made[size] = (run_id, f"{run_id}{size // 2:016x}")
    store.close()
    return made


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def server_time(client: httpx.Client, path: str) -> float:
    answer = client.get(path)
    answer.raise_for_status()
    found = TIMING.search(answer.headers["server-timing"])
    assert found is not None
    return float(found.group(1))


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def repetition(
    url: str, runs: dict[int, tuple[str, str]], workdir: Path
) -> tuple[dict[str, list[float]], float]:
    """One fresh server: every target of every run once (cold first), then its peak RSS."""
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchyard",
            "serve",
            "--read-only",
            "--db",
            url,
            "--port",
            str(port),
        ],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    samples: dict[str, list[float]] = {}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600) as client:
            deadline = time.monotonic() + 60
            while True:
                try:
                    client.get("/static/benchyard.css")
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            warm_run, warm_attempt = runs[WARM_UP]
            for path in (f"/runs/{warm_run}", f"/attempts/{warm_attempt}?fragment=1"):
                server_time(client, path)  # templates compiled, connections opened
            for size, (run_id, attempt_id) in runs.items():
                if size == WARM_UP:
                    continue
                targets = {
                    "run page, cold": f"/runs/{run_id}",
                    "run page, warm": f"/runs/{run_id}",
                    "sorted by duration": f"/runs/{run_id}?sort=duration&order=desc",
                    "failures only": f"/runs/{run_id}?verdict=failed&verdict=timeout",
                    "drawer": f"/attempts/{attempt_id}?fragment=1",
                }
                for name, path in targets.items():
                    samples.setdefault(f"{name}|{size}", []).append(server_time(client, path))
        return samples, peak_rss_mb(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)


def measure(label: str, url: str, runs: dict[int, tuple[str, str]], workdir: Path) -> None:
    samples: dict[str, list[float]] = {}
    peaks = []
    for _ in range(REPEAT):
        got, peak = repetition(url, runs, workdir)
        for key, values in got.items():
            samples.setdefault(key, []).extend(values)
        peaks.append(peak)
    print(
        f"\n{label}: server time in ms, median [min-max] of {REPEAT}, and x the 100-attempt warm run page"
    )
    base = statistics.median(samples[f"run page, warm|{SIZES[0]}"])
    names = ("run page, cold", "run page, warm", "sorted by duration", "failures only", "drawer")
    print(f"{'':<20}" + "".join(f"{size:>28,}" for size in SIZES))
    for name in names:
        cells = []
        for size in SIZES:
            values = samples[f"{name}|{size}"]
            median = statistics.median(values)
            cells.append(
                f"{median:8.1f} [{min(values):.0f}-{max(values):.0f}] {median / base:5.1f}x"
            )
        print(f"{name:<20}" + "".join(f"{cell:>28}" for cell in cells))
    print(
        f"peak RSS of the server: median {statistics.median(peaks):.0f} MiB [{min(peaks):.0f}-{max(peaks):.0f}]"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        url = f"sqlite:///{root / 'bench.db'}"
        started = time.perf_counter()
        runs = fill(url)
        total = sum(SIZES) + WARM_UP
        print(
            f"filled {total:,} attempts ({len(runs)} runs) in {time.perf_counter() - started:.0f} s"
        )
        measure("store at head (index ix_attempts_run_final, migration 0005)", url, runs, root)


if __name__ == "__main__":
    main()
