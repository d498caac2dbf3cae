"""The worker's watchdog: an attempt that does not end, not even when cancelled, is recorded as
timed out at its ceiling and left behind, and its run ends; the other attempts are unaffected."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from benchyard.agents.base import AgentResult, AgentTask
from benchyard.runner import watchdog
from benchyard.runner.api import execute, plan_run
from benchyard.runner.execute import RunSettings
from benchyard.runner.watchdog import WATCHDOG_CAUSE
from benchyard.spec.loader import load_benchmark
from benchyard.store.store import Store
from tests.support import scenario, write_benchmark

STUBBORN_SEC = 3600.0  # longer than the test: it must not wait for it


class StubbornAgent:
    """Answers at once, except for the scenario `hang`, where it waits and swallows every
    cancellation (as a wait on a lost notification did)."""

    name = "stubborn"
    needs_workdir = False

    def describe(self) -> dict[str, Any]:
        return {"kind": "stubborn"}

    async def run(self, task: AgentTask) -> AgentResult:
        if task.scenario.id == "hang":
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
