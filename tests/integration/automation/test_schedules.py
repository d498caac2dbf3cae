"""Schedules with a clock the test controls: a firing due is queued once, missed firings follow
the schedule's policy, several workers looking at once queue one run, and a real worker queues,
runs and compares a scheduled run."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from benchyard.automation.schedules import (
    Firing,
    fire_due,
    firing_for_run,
    firings,
    list_schedules,
    remove_schedule,
)
from benchyard.store.store import Store
from tests.integration.automation.helpers import oracle_schedule, small_benchmark
from tests.integration.queue.helpers import WorkerProcess, wait_for
from tests.support import Cli

T0 = datetime(2026, 3, 2, 2, 0, tzinfo=UTC)  # a Monday, 02:00 UTC
WEEKLY = "0 3 * * 1"  # Mondays 03:00 UTC
FAR = datetime(2100, 1, 4, 3, 0, tzinfo=UTC)  # no worker's own clock gets there: the test fires
THREE_MINUTES = timedelta(minutes=3)


def test_nothing_is_queued_before_the_first_firing(store: Store, tmp_path: Path) -> None:
    schedule = oracle_schedule(store, small_benchmark(tmp_path / "b"), WEEKLY, T0)
    assert schedule.next_due_at == T0 + timedelta(hours=1)
    assert fire_due(store, T0 + timedelta(minutes=59)) == []
    assert store.list_runs() == []


def test_a_due_firing_queues_one_run_and_moves_to_the_next(store: Store, tmp_path: Path) -> None:
    oracle_schedule(store, small_benchmark(tmp_path / "b"), WEEKLY, T0)
    due = T0 + timedelta(hours=1, seconds=20)
    handled = fire_due(store, due)
    assert [(f.action, f.missed, f.due_at) for f in handled] == [
        ("enqueued", 0, T0 + timedelta(hours=1))
    ]
    run = store.get_run(str(handled[0].run_id))
    assert (run.status, run.planned_attempts, run.agent_name) == ("queued", 4, "oracle")
    assert fire_due(store, due + timedelta(seconds=5)) == []  # handled: nothing more
    (schedule,) = list_schedules(store)
    assert schedule.next_due_at == T0 + timedelta(days=7, hours=1)
    assert firing_for_run(store, run.id) == handled[0]


def test_missed_firings_run_once_under_once(store: Store, tmp_path: Path) -> None:
    oracle_schedule(store, small_benchmark(tmp_path / "b"), WEEKLY, T0, missed="once")
    three_weeks_late = T0 + timedelta(days=21, hours=2)  # 4 firings passed, the last 1 h ago
    (firing,) = fire_due(store, three_weeks_late)
    assert (firing.action, firing.missed) == ("enqueued", 4)  # all late; one run for them
    assert firing.due_at == T0 + timedelta(days=21, hours=1)
    assert len(store.list_runs()) == 1


def test_missed_firings_are_skipped_under_skip(store: Store, tmp_path: Path) -> None:
    schedule = oracle_schedule(store, small_benchmark(tmp_path / "b"), WEEKLY, T0, missed="skip")
    (firing,) = fire_due(store, T0 + timedelta(days=21, hours=2))
    assert (firing.action, firing.missed, firing.run_id) == ("skipped", 4, None)
    assert "missed while no worker ran" in str(firing.detail)
    assert store.list_runs() == []
    (after,) = list_schedules(store)
    assert after.next_due_at == T0 + timedelta(days=28, hours=1)
    # the next firing, seen on time, runs
    (on_time,) = fire_due(store, after.next_due_at + timedelta(seconds=30))
    assert (on_time.action, on_time.missed) == ("enqueued", 0)
    assert [f.action for f in firings(store, schedule.id)] == ["enqueued", "skipped"]


def test_a_firing_seen_within_the_grace_period_is_on_time_under_skip(
    store: Store, tmp_path: Path
) -> None:
    oracle_schedule(store, small_benchmark(tmp_path / "b"), WEEKLY, T0, missed="skip", grace=600)
    (firing,) = fire_due(store, T0 + timedelta(hours=1, minutes=9))
    assert (firing.action, firing.missed) == ("enqueued", 0)


def test_a_run_that_cannot_be_queued_is_recorded_as_refused(store: Store, tmp_path: Path) -> None:
    bench = small_benchmark(tmp_path / "b")
    oracle_schedule(store, bench, WEEKLY, T0)
    (bench / "scenarios" / "main.yaml").write_text("- id: broken\n", encoding="utf-8")
    (firing,) = fire_due(store, T0 + timedelta(hours=1))
    assert firing.action == "refused" and "stimulus" in str(firing.detail)
    assert store.list_runs() == []


def test_several_workers_looking_at_once_queue_one_run(db_url: str, tmp_path: Path) -> None:
    setup = Store.open(db_url)
    oracle_schedule(setup, small_benchmark(tmp_path / "b"), "*/5 * * * *", T0)
    stores = [Store.open(db_url) for _ in range(6)]
    barrier = threading.Barrier(len(stores))
    results: list[int] = []
    lock = threading.Lock()

    def look(store: Store) -> None:
        barrier.wait()
        handled = fire_due(store, T0 + timedelta(minutes=5, seconds=1))
        with lock:
            results.append(len(handled))

    threads = [threading.Thread(target=look, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(results) == [0, 0, 0, 0, 0, 1]
    assert len(setup.list_runs()) == 1
    for store in [*stores, setup]:
        store.close()


def test_a_worker_with_a_stale_clock_never_handles_a_firing_again(
    store: Store, tmp_path: Path
) -> None:
    """A worker slowed by load claims with a time it read before another worker's claim: the
    firing already handled is not handled again; the next minute's is a firing of its own."""
    schedule = oracle_schedule(store, small_benchmark(tmp_path / "b"), "* * * * *", T0)
    minute = T0 + timedelta(minutes=5)
    (handled,) = fire_due(store, minute + timedelta(seconds=30))
    assert fire_due(store, minute + timedelta(seconds=29)) == []  # read before, claimed after
    assert fire_due(store, minute + timedelta(seconds=59)) == []
    (following,) = fire_due(store, minute + timedelta(minutes=1, seconds=1))
    assert [f.due_at for f in firings(store, schedule.id)] == [following.due_at, handled.due_at]
    assert (handled.due_at, following.due_at) == (minute, minute + timedelta(minutes=1))
    assert len(store.list_runs()) == 2


def test_each_firing_keeps_its_own_comparison_when_the_next_one_ran_first(
    store: Store, tmp_path: Path, cli: Cli
) -> None:
    """Under load the next minute's firing can be queued, run and compared before anyone reads the
    first one's comparison: then the newest firing is the next one, compared with the first run,
    while the first still says it had nothing to compare with. A firing is found by its run."""
    schedule = oracle_schedule(
        store, small_benchmark(tmp_path / "b"), "* * * * *", FAR - THREE_MINUTES
    )
    (first,) = fire_due(store, FAR + timedelta(seconds=58))  # late in its minute
    assert cli("worker", "--drain", "--poll", "0.05").exit_code == 0  # runs it, compares it
    (second,) = fire_due(store, FAR + timedelta(minutes=1, seconds=1))  # the next minute's
    assert cli("worker", "--drain", "--poll", "0.05").exit_code == 0

    assert [f.id for f in firings(store, schedule.id)] == [second.id, first.id]  # one each
    assert _firing_of(store, first.run_id).detail == "no earlier run to compare with"
    compared = _firing_of(store, second.run_id)
    assert (compared.baseline_run_id, compared.regression) == (first.run_id, False)
    assert str(compared.detail).startswith(f"run {str(second.run_id)[:8]}: no significant change")


@pytest.mark.slow
def test_two_real_workers_queue_a_due_schedule_once_run_it_and_compare_with_the_last(
    store: Store, db_url: str, tmp_path: Path, cli: Cli
) -> None:
    bench = small_benchmark(tmp_path / "b")
    now = datetime.now(UTC)
    schedule = oracle_schedule(store, bench, "* * * * *", now - THREE_MINUTES)
    logs = [tmp_path / "w1.log", tmp_path / "w2.log"]
    workers = [WorkerProcess(db_url, cli.cwd, log, "--poll", "0.05") for log in logs]
    try:
        # Each firing is followed by its run: the next minute's firing may come at any moment
        # (on a loaded machine, before the first run is compared), and then it is the newest.
        wait_for(lambda: _oldest_handled(store, schedule.id) is not None, 60, "the first firing")
        first = _oldest_handled(store, schedule.id)
        assert first is not None and first.action == "enqueued" and first.missed >= 1  # on time
        run_id = str(first.run_id)
        wait_for(lambda: store.get_run(run_id).status == "finished", 60, "the run")
        wait_for(lambda: _firing_of(store, run_id).detail is not None, 30, "the comparison")
        assert _firing_of(store, run_id).detail == "no earlier run to compare with"
        # the next minute's firing is compared with the first run
        wait_for(lambda: _next_enqueued(store, first) is not None, 90, "the next firing")
        second = _next_enqueued(store, first)
        assert second is not None
        wait_for(lambda: _firing_of(store, second.run_id).baseline_run_id, 60, "the comparison")
        compared = _firing_of(store, second.run_id)
        assert compared.baseline_run_id == first.run_id
        assert compared.regression is False
    finally:
        for worker in workers:
            assert worker.stop() == 0
    queued = [line for log in logs for line in log.read_text().splitlines() if "queued run" in line]
    assert len(queued) == len(firings(store, schedule.id))  # each firing queued by one worker
    assert "vs" in cli("schedule", "list").output
    remove_schedule(store, schedule.id)
    assert list_schedules(store) == []


def _firing_of(store: Store, run_id: str | None) -> Firing:
    found = firing_for_run(store, str(run_id))
    assert found is not None, f"no firing queued run {run_id}"
    return found


def _oldest_handled(store: Store, schedule_id: str) -> Firing | None:
    """The schedule's first firing, once a worker handled it (queued its run or refused it)."""
    found = firings(store, schedule_id)
    return found[-1] if found and found[-1].action != "claimed" else None


def _next_enqueued(store: Store, after: Firing) -> Firing | None:
    """The firing after `after` whose run was queued, if there is one yet."""
    later = [
        firing
        for firing in firings(store, after.schedule_id)
        if firing.due_at > after.due_at and firing.action == "enqueued"
    ]
    return later[-1] if later else None


def test_the_cli_adds_lists_and_removes_schedules(tmp_path: Path, cli: Cli, store: Store) -> None:
    bench = small_benchmark(tmp_path / "b")
    added = cli(
        "schedule",
        "add",
        str(bench),
        "--agent",
        "oracle",
        "--cron",
        "0 3 * * 1",
        "--missed",
        "skip",
        "--epochs",
        "2",
        "--filter",
        "category:easy",
        "--sandbox",
        "none",
        "--allow-unsandboxed",
    )
    assert added.exit_code == 0, added.output
    schedule_id = added.output.strip().splitlines()[-1]
    (schedule,) = list_schedules(store)
    assert schedule.id == schedule_id and schedule.missed == "skip"
    assert schedule.settings["epochs"] == 2 and schedule.settings["filters"] == ["category:easy"]
    assert schedule.benchmark == str(bench.resolve())
    listed = cli("schedule", "list")
    assert schedule_id[:8] in listed.output and "'0 3 * * 1'" in listed.output
    bad_cron = cli("schedule", "add", str(bench), "--agent", "oracle", "--cron", "every monday")
    assert bad_cron.exit_code == 2 and "is not a cron expression" in bad_cron.output
    unknown = cli("schedule", "add", str(bench), "--agent", "ghost", "--cron", "@daily")
    assert unknown.exit_code == 2 and "no agent named 'ghost'" in unknown.output
    assert cli("schedule", "remove", schedule_id[:6]).exit_code == 0
    assert list_schedules(store) == []
