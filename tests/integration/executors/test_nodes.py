"""Where attempts run, on the store and in what shows it: each try keeps its node (this machine
for the local executor), a claimed attempt the node it runs on; an attempt whose Ray node was
lost is recorded on its run as a resume, and runs again unless the run asked to fail."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import update

from benchyard.cli.progress import ProgressObserver
from benchyard.runner.provenance import host_name
from benchyard.store.browse import node_counts, open_attempts, workers
from benchyard.store.queue import Queue, WorkerIdentity
from benchyard.store.schema import attempt_queue
from benchyard.store.store import Store
from tests.support import Cli, attempt_record, run_record, scenario, write_benchmark


def test_a_local_run_names_this_machine_for_every_attempt(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(tmp_path / "b", [scenario("a", "x"), scenario("b", "y")])
    assert cli("run", str(bench), "--agent", "oracle", "-q").exit_code == 0
    run = store.resolve_run("latest")
    host = host_name()
    assert {t.node for t in store.attempts(run.id, include_superseded=True)} == {host}
    assert node_counts(store, [run.id]) == {run.id: {host: 2}}
    [entry] = json.loads(cli("runs", "--format", "json").output)
    assert entry["nodes"] == {host: 2}
    shown = json.loads(cli("show", run.id, "--format", "json").output)
    assert {a["node"] for a in shown["attempts"]} == {host}
    assert f"on {host}" in cli("show", run.id, "a").output


def test_the_progress_bar_names_nodes_only_where_attempts_ran_elsewhere() -> None:
    from benchyard.store.records import AttemptRecord

    bar = ProgressObserver(3, enabled=False)
    here = attempt_record("r", "1", "a", node=host_name())
    bar.finished_try(here)
    assert bar.nodes_text() == ""
    for number, node in enumerate(["vm/ray-1", "vm/ray-2", "vm/ray-2", "x", "y"], start=2):
        record: AttemptRecord = attempt_record("r", str(number), "a", node=node)
        bar.finished_try(record)
    assert bar.nodes_text() == f"on vm/ray-2 2, {host_name()} 1, vm/ray-1 1 (+2 more nodes)"


def _held(store: Store, run_id: str, count: int, **settings: object) -> tuple[Queue, list[int]]:
    queue, me = Queue(store), WorkerIdentity("test:driver", "elsewhere", 999_999)
    run = run_record(run_id, status="running", planned_attempts=count, settings=settings)
    queue.enqueue(run, [(f"s{i}", 1) for i in range(count)], holder=me)
    return queue, [item.id for item in queue.held(me, run_id)]


def test_claimed_attempts_show_the_node_they_run_on(store: Store) -> None:
    _queue, ids = _held(store, "c" * 16, 3)
    with store.engine.begin() as connection:
        connection.execute(
            update(attempt_queue).where(attempt_queue.c.id.in_(ids[:2])).values(node="vm/b")
        )
    [worker] = workers(store)
    assert worker.worker == "test:driver" and worker.held == 3 and worker.nodes == {"vm/b": 2}
    assert [a.node for a in open_attempts(store)] == ["vm/b", "vm/b", None]


def test_attempts_that_lost_their_node_are_recorded_and_run_again(store: Store) -> None:
    run_id = "d" * 16
    queue, ids = _held(store, run_id, 3)
    me = WorkerIdentity("test:driver", "elsewhere", 999_999)
    done = attempt_record(run_id, "0" * 32, "s0")
    assert queue.write(me, [(done, ids[0])]).written == 1
    other = WorkerIdentity("test:other", "elsewhere", 999_998)
    assert queue.lost_elsewhere(other, ids[1:], "vm/b", "the Ray node died") == ([], set())
    resumes, again = queue.lost_elsewhere(me, [*ids, 12345], "vm/b", "the Ray node died")
    assert again == set(ids[1:])  # the finished one is not held any more
    [resume] = resumes
    assert (resume.action, resume.lost_worker, resume.cause, resume.by_worker) == (
        "requeued",
        "vm/b",
        "the Ray node died",
        me.id,
    )
    assert (resume.kept, resume.requeued) == (1, 2)
    assert queue.heartbeat(me, 60) == set(ids[1:])  # still held: they run again
    assert queue.resumes(run_id) == [resume]


def test_a_run_that_asked_to_fail_on_a_crash_fails_when_a_node_is_lost(store: Store) -> None:
    run_id = "e" * 16
    queue, ids = _held(store, run_id, 2, on_crash="fail")
    me = WorkerIdentity("test:driver", "elsewhere", 999_999)
    resumes, again = queue.lost_elsewhere(me, ids[:1], "vm/b", "the Ray node died")
    assert again == set() and [r.action for r in resumes] == ["failed"]
    run = store.get_run(run_id)
    assert run.status == "failed"
    assert run.status_reason == "worker vm/b was lost (the Ray node died); --on-crash fail"
    assert queue.heartbeat(me, 60) == set()  # the other attempt was cancelled with the run
