"""Claims, leases and heartbeats on the store itself: workers never hold the same attempt, a lost
lease is taken back and recorded, and a write from a worker that lost its claim is discarded."""

from __future__ import annotations

import threading

from benchyard.store.queue import Queue, WorkerIdentity
from benchyard.store.records import AttemptRecord
from benchyard.store.store import Store
from tests.support import attempt_record, run_record


def _identity(name: str, pid: int = 999_999) -> WorkerIdentity:
    return WorkerIdentity(id=f"test:{name}", node="elsewhere", pid=pid)


def _queued_run(store: Store, run_id: str, count: int) -> None:
    run = run_record(run_id, status="queued", planned_attempts=count)
    Queue(store).enqueue(run, [(f"s{i:04d}", 1) for i in range(count)])


def _final_try(item_id: int, run_id: str, scenario_id: str) -> tuple[AttemptRecord, int]:
    return attempt_record(run_id, f"{item_id:032x}", scenario_id), item_id


def test_concurrent_claimers_never_share_an_attempt(store: Store) -> None:
    _queued_run(store, "a" * 16, 400)
    claimed: dict[str, list[int]] = {}

    def claim_all(name: str) -> None:
        queue, me, mine = Queue(store), _identity(name), []
        while batch := queue.claim(me, 7, lease_sec=60):
            mine += [item.id for item in batch]
        claimed[name] = mine

    threads = [threading.Thread(target=claim_all, args=(f"w{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [item for items in claimed.values() for item in items]
    assert len(every) == 400
    assert len(set(every)) == 400
    assert store.get_run("a" * 16).status == "running"


def test_an_expired_lease_is_taken_back_and_the_late_write_discarded(store: Store) -> None:
    run_id = "b" * 16
    _queued_run(store, run_id, 3)
    queue, slow, rescuer = Queue(store), _identity("slow"), _identity("rescuer")
    held = queue.claim(slow, 3, lease_sec=60)
    assert queue.write(slow, [_final_try(held[0].id, run_id, held[0].scenario_id)]).written == 1
    assert queue.reclaim(rescuer) == []  # the lease still runs
    queue.heartbeat(slow, lease_sec=-1)  # as if its last heartbeat were long ago
    [resume] = queue.reclaim(rescuer)
    assert (resume.action, resume.lost_worker, resume.by_worker) == (
        "requeued",
        slow.id,
        rescuer.id,
    )
    assert (resume.kept, resume.requeued, resume.cause) == (1, 2, "its lease expired")
    late = queue.write(slow, [_final_try(held[1].id, run_id, held[1].scenario_id)])
    assert (late.written, late.discarded) == (0, 1)
    assert queue.heartbeat(slow, 60) == set()
    again = queue.claim(rescuer, 5, lease_sec=60)
    assert sorted(item.scenario_id for item in again) == sorted(i.scenario_id for i in held[1:])
    done = queue.write(rescuer, [_final_try(i.id, run_id, i.scenario_id) for i in again])
    assert done.ended_runs == [run_id]
    assert store.get_run(run_id).status == "finished"
    assert [r.action for r in queue.resumes(run_id)] == ["requeued"]


def test_a_heartbeat_renews_the_lease(store: Store) -> None:
    _queued_run(store, "c" * 16, 2)
    queue, worker = Queue(store), _identity("steady")
    held = {item.id for item in queue.claim(worker, 2, lease_sec=-1)}  # expired at once...
    assert queue.heartbeat(worker, lease_sec=60) == held  # ...but renewed before anyone looked
    assert queue.reclaim(_identity("other")) == []


def test_claims_of_a_dead_worker_on_this_node_are_taken_back_at_once(store: Store) -> None:
    _queued_run(store, "d" * 16, 2)
    queue = Queue(store)
    here = WorkerIdentity.here()
    dead = WorkerIdentity(id="test:dead", node=here.node, pid=4_000_000)  # beyond pid_max
    queue.claim(dead, 2, lease_sec=600)
    assert queue.local_holders(here) == {4_000_000}
    [resume] = queue.reclaim(here, {4_000_000})
    assert (resume.cause, resume.requeued) == ("its process is gone", 2)


def test_an_inline_run_reads_what_it_holds_a_chunk_at_a_time_in_plan_order(store: Store) -> None:
    run_id, me, other = "f" * 16, _identity("inline"), _identity("other")
    run = run_record(run_id, status="running", planned_attempts=5)
    queue = Queue(store)
    queue.enqueue(run, ((f"s{i}", epoch) for epoch in (1, 2) for i in range(3)), holder=me)
    first = queue.held(me, run_id, limit=4)
    rest = queue.held(me, run_id, after=first[-1].id, limit=4)
    assert [(i.scenario_id, i.epoch) for i in first + rest] == [
        ("s0", 1), ("s1", 1), ("s2", 1), ("s0", 2), ("s1", 2), ("s2", 2)
    ]  # fmt: skip
    assert queue.held(me, run_id, after=rest[-1].id) == []
    assert queue.held(other, run_id) == []
    assert store.get_run(run_id).status == "running"
    assert queue.claim(other, 10, lease_sec=60) == []  # held already: nobody else takes them


def test_a_heartbeat_asked_about_some_attempts_answers_for_those_only(store: Store) -> None:
    _queued_run(store, "9" * 16, 5)
    queue, worker = Queue(store), _identity("busy")
    held = [item.id for item in queue.claim(worker, 5, lease_sec=-1)]
    assert queue.heartbeat(worker, 60, among={held[0], held[3], 10**9}) == {held[0], held[3]}
    assert queue.reclaim(_identity("other")) == []  # every lease was renewed, asked about or not
