"""The worker's watchdog: an attempt that does not end, not even when cancelled, is recorded as
timed out at its ceiling and left behind, and its run ends; the other attempts are unaffected.
Before its ceiling, such an attempt is shown stuck, and another worker (`worker --drain`) takes
it back and runs it."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from benchyard.agents import registry
from benchyard.agents.base import AgentResult, AgentTask
from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner import watchdog
from benchyard.runner.api import execute, plan_run
from benchyard.runner.execute import RunSettings
from benchyard.runner.loop import run_async
from benchyard.runner.watchdog import WATCHDOG_CAUSE
from benchyard.runner.worker import WorkerOptions, serve_queue
from benchyard.store.browse import queue_counts
from benchyard.store.queue import Queue
from benchyard.store.store import Store
from tests.support import scenario, write_benchmark

STUBBORN_SEC = 3600.0  # longer than the test: it must not wait for it


class StubbornAgent:
    """Answers at once, except for the scenario `hang`, where it waits and swallows every
    cancellation (as a wait on a lost notification did): always, or the first time only."""

    name = "stubborn"
    needs_workdir = False
    hangs_left = 1_000_000

    def describe(self) -> dict[str, Any]:
        return {"kind": "stubborn"}

    async def run(self, task: AgentTask) -> AgentResult:
        if task.scenario.id == "hang" and StubbornAgent.hangs_left > 0:
            StubbornAgent.hangs_left -= 1
            ends = asyncio.get_running_loop().time() + STUBBORN_SEC
            while (left := ends - asyncio.get_running_loop().time()) > 0:
                try:
                    await asyncio.sleep(left)
                except asyncio.CancelledError:
                    continue
        return AgentResult(answers=["x"])


def test_an_attempt_that_never_ends_is_recorded_as_timed_out_and_the_run_ends(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, seconds in (("WATCHDOG_GRACE_SEC", 0.2), ("CHECK_ALLOWANCE_SEC", 0.2)):
        monkeypatch.setattr(watchdog, name, seconds)
    monkeypatch.setattr("benchyard.runner.worker.ABANDON_GRACE_SEC", 0.5)
    monkeypatch.setattr("benchyard.runner.loop.LEFTOVER_GRACE_SEC", 0.5)
    bench = load_benchmark(
        str(write_benchmark(tmp_path / "b", [scenario("hang", "x"), scenario("fine", "x")]))
    )
    settings = RunSettings(
        concurrency=2, sandbox="none", work_root=str(tmp_path), timeout_sec=0.5, retries=0
    )

    run = execute(store, bench, StubbornAgent(), plan_run(bench, settings), settings)

    assert run.status == "finished"
    verdicts = {a.scenario_id: a for a in store.attempts(run.id)}
    assert verdicts["fine"].verdict == "passed"
    assert verdicts["hang"].verdict == "timeout"
    assert WATCHDOG_CAUSE in (verdicts["hang"].cause or "")
    assert len(store.attempts(run.id)) == 2  # one try each: nothing written twice


def test_a_stuck_attempt_is_shown_and_another_worker_takes_it_back(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The inline run's worker marks its stubborn attempt stuck (its phase cancelled, still
    running); `worker --drain` takes it back and runs it to a pass, and the run ends."""
    for name, seconds in (("WATCHDOG_GRACE_SEC", 0.2), ("ABANDON_GRACE_SEC", 0.2)):
        monkeypatch.setattr(watchdog, name, seconds)
    monkeypatch.setattr(watchdog, "CHECK_ALLOWANCE_SEC", 8.0)  # a ceiling well past the takeover
    monkeypatch.setattr("benchyard.runner.worker.ABANDON_GRACE_SEC", 0.5)
    monkeypatch.setattr("benchyard.runner.worker.MAX_HEARTBEAT_SEC", 0.2)
    monkeypatch.setattr("benchyard.runner.loop.LEFTOVER_GRACE_SEC", 0.5)
    monkeypatch.setattr(StubbornAgent, "hangs_left", 1)
    monkeypatch.setitem(registry.BUILTIN_KINDS, "stubborn", lambda name, config: StubbornAgent())
    bench = load_benchmark(str(write_benchmark(tmp_path / "b", [scenario("hang", "x")])))
    settings = RunSettings(
        concurrency=1, sandbox="none", work_root=str(tmp_path), timeout_sec=0.5, retries=0
    )
    seen: dict[str, Any] = {}

    def drain_once_stuck() -> None:
        while (time.monotonic() < seen["until"]) and not seen.get("stuck"):
            listed = store.list_runs(1)
            counts = queue_counts(store, [run.id for run in listed])
            seen["stuck"] = sum(count.stuck for count in counts.values())
            time.sleep(0.1)
        options = WorkerOptions(concurrency=1, drain=True, work_root=str(tmp_path))
        seen["drained"] = run_async(serve_queue(store, options))

    seen["until"] = time.monotonic() + 25
    drainer = threading.Thread(target=drain_once_stuck)
    drainer.start()
    run = execute(store, bench, StubbornAgent(), plan_run(bench, settings), settings)
    drainer.join(60)

    assert seen["stuck"] == 1  # shown stuck before the ceiling
    final = store.get_run(run.id)
    assert final.status == "finished"
    [attempt] = store.attempts(run.id)
    assert attempt.verdict == "passed"  # run again by the draining worker
    [resume] = Queue(store).resumes(run.id)
    assert resume.cause == "its watchdog found the attempt stuck"
