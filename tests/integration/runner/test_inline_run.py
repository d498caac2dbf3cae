"""An inline run (`benchyard run`) reads what it enqueued from the queue a chunk at a time: every
planned attempt runs once, in plan order, however many chunks the plan spans."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchyard.agents.registry import build_agent
from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.api import execute, plan_run
from benchyard.runner.execute import RunSettings
from benchyard.runner.worker import MAX_CLAIM_FACTOR
from benchyard.store.store import Store
from tests.support import scenario, write_benchmark


@pytest.mark.parametrize("concurrency", [1, 3])
def test_every_planned_attempt_runs_once_across_chunks(
    tmp_path: Path, store: Store, concurrency: int
) -> None:
    count = MAX_CLAIM_FACTOR + 5  # a chunk is at most this factor per lane: a plan of 2+ chunks
    bench = load_benchmark(
        str(write_benchmark(tmp_path / "b", [scenario(f"s{i:02d}", "x") for i in range(count)]))
    )
    settings = RunSettings(
        concurrency=concurrency, epochs=3, sandbox="none", work_root=str(tmp_path)
    )
    plan = plan_run(bench, settings)
    run = execute(store, bench, build_agent("oracle", {"kind": "oracle"}), plan, settings)
    assert run.status == "finished"
    attempts = store.attempts(run.id)
    assert sorted((a.scenario_id, a.epoch) for a in attempts) == sorted(
        (p.scenario.id, p.epoch) for p in plan
    )
    assert all(a.verdict == "passed" for a in attempts)
    if concurrency == 1:  # one lane starts them in plan order
        started = sorted(attempts, key=lambda a: a.started_at)
        assert [(a.scenario_id, a.epoch) for a in started] == [
            (p.scenario.id, p.epoch) for p in plan
        ]
