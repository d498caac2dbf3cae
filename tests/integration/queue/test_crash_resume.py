"""A worker killed with SIGKILL at random points loses nothing and runs nothing twice: after a
restart every run finishes with the report of an uninterrupted run. SQLite: one worker;
PostgreSQL: three workers in separate processes sharing the store."""

from __future__ import annotations

import random
import re
import time
from collections import Counter, defaultdict
from pathlib import Path

from sqlalchemy import select

from benchyard.store.queue import Queue
from benchyard.store.schema import attempt_queue
from benchyard.store.store import Store
from tests.conftest import TEST_DB
from tests.integration.queue.helpers import (
    WorkerProcess,
    logging_agent,
    mixed_benchmark,
    normalised_report,
    wait_for,
)
from tests.support import UNSANDBOXED, Cli

SEED = 20261130
TRIALS = 20
EPOCHS = 2
ATTEMPTS = 12 * EPOCHS
WORKERS = 1 if TEST_DB == "sqlite" else 3
RUN_IN_WORKDIR = re.compile(r"benchyard-([0-9a-f]{16})-\d+-")


def test_sigkilled_workers_lose_nothing_and_run_nothing_twice(
    tmp_path: Path, cli: Cli, store: Store, db_url: str
) -> None:
    rng = random.Random(SEED)
    log = tmp_path / "executions.log"
    bench = mixed_benchmark(tmp_path / "bench")
    # Each attempt takes 0.1 s, so a kill a few attempts before the end finds work still claimed
    # however fast the machine is.
    agent = [
        "--agent-cmd",
        logging_agent(log, pause_sec=0.1),
        "--epochs",
        str(EPOCHS),
        *UNSANDBOXED,
    ]
    assert cli("run", str(bench), *agent, "-q").exit_code == 0
    reference = normalised_report(store, store.resolve_run("latest").id)
    log.unlink()

    options = ("-j", "3", "--lease", "3", "--poll", "0.05")
    logs = tmp_path / "workers.log"
    workers = [WorkerProcess(db_url, cli.cwd, logs, *options) for _ in range(WORKERS)]
    started = {worker.pid for worker in workers}
    killed: set[int] = set()
    runs = []
    try:
        for _ in range(TRIALS):
            runs.append(_enqueue(cli, bench, agent))
            kill_after = rng.randrange(ATTEMPTS - 4)  # finished attempts, then a moment more
            _wait_for_attempts(store, runs[-1], kill_after)
            time.sleep(rng.uniform(0, 0.05))
            victim = _victim(store, runs[-1], workers, rng)
            killed.add(workers[victim].pid)
            workers[victim].kill()
            workers[victim] = WorkerProcess(db_url, cli.cwd, logs, *options)
            started.add(workers[victim].pid)
            _wait_for_status(store, runs[-1], "finished")
    finally:
        for worker in workers:
            worker.stop()

    executions = _executions(log)
    resumes = 0
    for run_id in runs:
        assert normalised_report(store, run_id) == reference, run_id
        tries = store.attempts(run_id, include_superseded=True)
        assert len(tries) == ATTEMPTS  # one try per attempt: nothing recorded twice
        assert len({(t.scenario_id, t.epoch) for t in tries}) == ATTEMPTS
        ran = executions[run_id]
        by_attempt = {attempt: pid for pid, _, attempt in ran}
        assert all(t.id in by_attempt for t in tries)  # every recorded attempt really ran
        stored = {t.id for t in tries}
        # What a worker that was never killed ran is recorded, and it ran each attempt once:
        # an attempt runs again only when the worker that ran it first was killed. (An agent
        # started as its worker died has been adopted by init: its parent is no worker.)
        healthy = [(pid, sid, attempt) for pid, sid, attempt in ran if pid in started - killed]
        assert all(attempt in stored for _, _, attempt in healthy)
        assert max(Counter(sid for _, sid, _ in healthy).values(), default=0) <= EPOCHS
        for resume in Queue(store).resumes(run_id):
            assert resume.action == "requeued"
            assert int(resume.lost_worker.split(":")[1]) in killed
            resumes += 1
    assert resumes >= TRIALS // 2, "most kills should have caught a worker holding attempts"
    assert "Traceback" not in logs.read_text()


def _enqueue(cli: Cli, bench: Path, agent: list[str]) -> str:
    queued = cli("run", str(bench), *agent, "--enqueue")
    assert queued.exit_code == 0, queued.output
    return str(queued.output.strip().splitlines()[-1])


def _wait_for_attempts(store: Store, run_id: str, count: int) -> None:
    wait_for(lambda: len(store.attempts(run_id)) >= count, what=f"{count} attempts of {run_id}")


def _wait_for_status(store: Store, run_id: str, status: str) -> None:
    wait_for(lambda: store.get_run(run_id).status == status, what=f"run {run_id} {status}")


def _victim(store: Store, run_id: str, workers: list[WorkerProcess], rng: random.Random) -> int:
    """A worker holding attempts of the run, if one does (else any)."""
    query = select(attempt_queue.c.worker_pid).where(
        attempt_queue.c.run_id == run_id, attempt_queue.c.state == "claimed"
    )
    with store.engine.connect() as connection:
        holders = set(connection.execute(query).scalars())
    candidates = [n for n, worker in enumerate(workers) if worker.pid in holders]
    return rng.choice(candidates or range(len(workers)))


def _executions(log: Path) -> dict[str, list[tuple[int, str, str]]]:
    """Each run's executions as (worker pid, scenario, attempt id), from the agent's log."""
    found: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for line in log.read_text().splitlines():
        pid, workdir, scenario_id, attempt_id = line.split()
        match = RUN_IN_WORKDIR.search(workdir)
        assert match, workdir
        found[match.group(1)].append((int(pid), scenario_id, attempt_id))
    return found
