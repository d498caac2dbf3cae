"""An inline run (`benchyard run`) reads what it enqueued from the queue a chunk at a time: every
planned attempt runs once, in plan order, however many chunks the plan spans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchyard.agents.registry import build_agent
from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.api import execute, plan_run
from benchyard.runner.execute import RunSettings
from benchyard.runner.worker import MAX_CLAIM_FACTOR
from benchyard.spec.models import Scenario
from benchyard.spec.scenario_index import CACHED, _Table
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


def test_a_run_reads_each_scenario_a_few_times_before_it_starts_then_once_an_attempt(
    tmp_path: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scenarios beyond the index's cache are read from their file each time they are asked for:
    the checks before a run (judge checks, the sandbox's requests, twice: before it is recorded
    and when its worker opens the sandbox) each look at a scenario once, whatever the epochs."""
    count, epochs = CACHED + 36, 3
    lines = [json.dumps(scenario(f"s{i:03d}", "x")) for i in range(count)]
    files = {"scenarios/all.jsonl": "\n".join(lines) + "\n"}  # JSONL: read when asked for
    bench = load_benchmark(str(write_benchmark(tmp_path / "b", [], files=files)))
    reads: list[int] = []
    read = _Table._read

    def counted(table: _Table, position: int) -> Scenario:
        reads.append(position)
        return read(table, position)

    monkeypatch.setattr(_Table, "_read", counted)
    settings = RunSettings(epochs=epochs, sandbox="none", work_root=str(tmp_path))
    run = execute(
        store, bench, build_agent("oracle", {"kind": "oracle"}), plan_run(bench, settings), settings
    )
    assert run.status == "finished"
    assert store.count_attempts(run.id) == count * epochs
    assert len(reads) <= (3 + epochs) * count  # before: each epoch's pass and six more: 12 each
