"""The Ray executor on a real two-node cluster (conftest.py) with a PostgreSQL store: attempts
placed by the resources their scenarios ask for, a run refused when no node offers them, a
cancelled run whose sandboxes stop on the nodes, and a node killed with SIGKILL mid-run whose
attempts run again on the other node, each recorded exactly once, the report that of an
uninterrupted run. The tests run in file order: the last one kills node `b`."""

from __future__ import annotations

import socket
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from benchyard.executors.ray.local_cluster import LocalCluster
from benchyard.store.queue import Queue
from benchyard.store.schema import attempt_queue
from benchyard.store.store import Store
from tests.integration.queue.helpers import WorkerProcess, normalised_report, wait_for
from tests.integration.ray.conftest import HEAD, WORKER_NODE
from tests.support import Cli, scenario, write_benchmark

pytestmark = [pytest.mark.slow, pytest.mark.store_half]  # a PostgreSQL store of its own
HOST = socket.gethostname()
ON_HEAD, ON_B = f"{HOST}/{HEAD}", f"{HOST}/{WORKER_NODE}"

AGENT = """\
import os, sys, time
print(f"agent at {__file__}", file=sys.stderr)
time.sleep(1)
scenario = os.environ["BENCHYARD_SCENARIO_ID"]
print("wrong" if scenario.startswith("f") else "right")
"""


def _agent(root: Path) -> list[str]:
    """A command agent in a script of its own (shipped to the nodes): right for scenarios p*,
    wrong for f*, after a second; it names its own path on stderr."""
    script = root / "agent" / "agent.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(AGENT, encoding="utf-8")
    return ["--agent-cmd", f"{sys.executable} {script}", "--agent-name", "sleeper"]


def _mixed(root: Path, passing: int = 8, failing: int = 4) -> Path:
    scenarios = [scenario(f"p{i:02d}", "right", category="easy") for i in range(passing)]
    scenarios += [scenario(f"f{i:02d}", "right", category="hard") for i in range(failing)]
    return write_benchmark(root, scenarios)


def _ray(cluster: LocalCluster) -> list[str]:
    return ["--executor", "ray", "--ray-address", cluster.address]


def _enqueue(cli: Cli, *args: str) -> str:
    queued = cli("run", *args, "--enqueue")
    assert queued.exit_code == 0, queued.output
    return str(queued.output.strip().splitlines()[-1])


def _run_process(cli: Cli, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "benchyard", "run", *args, "--db", cli.db_url]
    return subprocess.run(command, cwd=cli.cwd, capture_output=True, text=True, timeout=timeout)


def _queued_nodes(store: Store, run_id: str) -> dict[str, str | None]:
    """Claimed attempts of the run (scenario/epoch) and the node each runs on, when known."""
    q = attempt_queue
    query = select(q.c.scenario_id, q.c.epoch, q.c.node).where(
        q.c.run_id == run_id, q.c.state == "claimed"
    )
    with store.engine.connect() as connection:
        return {f"{sid}/{epoch}": node for sid, epoch, node in connection.execute(query)}


def test_attempts_land_where_their_resources_are_and_a_run_no_node_can_host_is_refused(
    tmp_path: Path, cluster: LocalCluster, pg_cli: Cli, pg_store: Store
) -> None:
    bench = write_benchmark(
        tmp_path / "placed",
        [scenario(f"p{i}", "right", limits={"resources": {"b_node": 1}}) for i in range(3)],
    )
    agent = _agent(tmp_path)
    done = _run_process(pg_cli, str(bench), *agent, *_ray(cluster), "-q")
    assert done.returncode == 0, done.stderr
    run = pg_store.resolve_run("latest")
    tries = pg_store.attempts(run.id, include_superseded=True, with_evidence=True)
    assert [(t.verdict, t.node) for t in tries] == [("passed", ON_B)] * 3
    # The agent's script was shipped to the node and ran from its cache, not from this path.
    assert all("byr-cache-" in (t.stderr or "") and "/code/" in (t.stderr or "") for t in tries)
    shown = pg_cli("show", run.id)
    assert ON_B in shown.output
    listed = pg_cli("runs", "--format", "json")
    assert f'"{ON_B}": 3' in listed.output

    gpu = write_benchmark(
        tmp_path / "gpu", [scenario("g", "right", limits={"resources": {"gpu": 1}})], name="gpu"
    )
    refused = _run_process(pg_cli, str(gpu), *agent, *_ray(cluster), "-q")
    assert refused.returncode == 2, refused.stderr
    assert "scenario 'g' asks for CPU 1, GPU 1, which no node of the Ray cluster offers" in (
        refused.stderr
    )
    assert "Traceback" not in refused.stderr
    assert [r.id for r in pg_store.list_runs(10)] == [run.id]  # nothing recorded


def test_cancelling_a_run_stops_its_sandboxes_on_the_nodes(
    tmp_path: Path, cluster: LocalCluster, pg_cli: Cli, pg_store: Store, postgres_url: str
) -> None:
    marker = f"cancel-me-{uuid.uuid4().hex[:8]}"
    bench = _mixed(tmp_path / "bench", passing=4, failing=0)
    run_id = _enqueue(pg_cli, str(bench), "--agent-cmd", f"sleep 120; echo {marker}")
    log = tmp_path / "worker.log"
    worker = WorkerProcess(postgres_url, pg_cli.cwd, log, *_ray(cluster), "--lease", "3")
    try:
        wait_for(
            lambda: sum(1 for node in _queued_nodes(pg_store, run_id).values() if node) == 2,
            timeout_sec=180,
            what="two attempts running, one on each node",
        )
        assert set(_queued_nodes(pg_store, run_id).values()) == {ON_HEAD, ON_B}
        # A try's node is recorded when it is claimed; its sandbox starts a moment later.
        wait_for(lambda: _marked(marker), timeout_sec=120, what="the agents in their sandboxes")
        cancelled = pg_cli("cancel", run_id)
        assert cancelled.exit_code == 0, cancelled.output
        wait_for(lambda: not _marked(marker), timeout_sec=60, what="the sandboxes stopped")
        assert pg_store.get_run(run_id).status == "cancelled"
        assert pg_store.attempts(run_id, include_superseded=True) == []
        assert worker.process.poll() is None  # the worker goes on serving the queue
    finally:
        assert worker.stop() == 0
    assert "Traceback" not in log.read_text()


def _marked(marker: str) -> bool:
    """Whether a process whose command line holds `marker` (an agent) is alive."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


def test_a_node_killed_mid_run_loses_nothing_and_runs_nothing_twice(
    tmp_path: Path, cluster: LocalCluster, pg_cli: Cli, pg_store: Store, postgres_url: str
) -> None:
    bench = _mixed(tmp_path / "bench")
    agent = [*_agent(tmp_path), "--epochs", "2"]
    attempts = 24
    reference_run = pg_cli("run", str(bench), *agent, "-q", "-j", "4")  # local, uninterrupted
    assert reference_run.exit_code == 0, reference_run.output
    reference = normalised_report(pg_store, pg_store.resolve_run("latest").id)

    run_id = _enqueue(pg_cli, str(bench), *agent)
    log = tmp_path / "worker.log"
    options = (*_ray(cluster), "--drain", "--lease", "10", "--poll", "0.1")
    worker = WorkerProcess(postgres_url, pg_cli.cwd, log, *options)
    try:
        # Attempts land on both nodes; then node b dies while it runs one.
        wait_for(
            lambda: (
                {t.node for t in pg_store.attempts(run_id)} == {ON_HEAD, ON_B}
                and ON_B in _queued_nodes(pg_store, run_id).values()
            ),
            timeout_sec=240,
            what="attempts finished on both nodes and one running on b",
        )
        on_b = [key for key, node in _queued_nodes(pg_store, run_id).items() if node == ON_B]
        killed_at = datetime.now(UTC)
        killed = cluster.kill_node(WORKER_NODE)
        assert killed, "node b had processes to kill"
        assert worker.process.wait(timeout=300) == 0
    finally:
        if worker.process.poll() is None:
            worker.kill()
    text = log.read_text()
    assert "Traceback" not in text, text

    assert pg_store.get_run(run_id).status == "finished"
    assert normalised_report(pg_store, run_id) == reference
    tries = pg_store.attempts(run_id, include_superseded=True)
    assert len(tries) == attempts  # one try per attempt: nothing recorded twice, nothing lost
    assert len({(t.scenario_id, t.epoch) for t in tries}) == attempts
    ran_on = {f"{t.scenario_id}/{t.epoch}": t for t in tries}
    assert {t.node for t in tries} == {ON_HEAD, ON_B}
    # Each attempt running on b when it was looked at was either recorded by b before the kill
    # (on a loaded machine the 1-second agent may end between the look and the kill) or lost
    # with b and run again on head; nothing b recorded is dated after its death.
    lost = [key for key in on_b if ran_on[key].node == ON_HEAD]
    assert all(ran_on[key].finished_at <= killed_at for key in on_b if key not in lost)
    assert all(t.finished_at <= killed_at for t in tries if t.node == ON_B)
    resumes = Queue(pg_store).resumes(run_id)
    assert resumes and all(r.lost_worker == ON_B and r.action == "requeued" for r in resumes)
    assert sum(r.requeued for r in resumes) >= max(len(lost), 1)
    assert all("died mid-attempt" in r.cause for r in resumes)  # the node, or its worker
    shown = pg_cli("show", run_id)
    assert f"worker {ON_B} was lost" in shown.output
    assert f"Ray node {ON_B} was lost" in text
