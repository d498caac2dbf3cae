"""The plan of a run: every chosen scenario, epoch after epoch, read like a list without holding
an object per attempt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.plan import Plan, plan_attempts, planned_ids, planned_scenario_ids
from benchyard.spec.models import Scenario


def _scenarios(count: int) -> list[Scenario]:
    return [
        Scenario.model_validate(
            {"id": f"s{i}", "stimulus": "hi", "checks": [{"type": "equals", "value": "x"}]}
        )
        for i in range(count)
    ]


def test_a_plan_reads_every_scenario_epoch_after_epoch() -> None:
    plan = plan_attempts(_scenarios(3), epochs=2)
    expected = [("s0", 1), ("s1", 1), ("s2", 1), ("s0", 2), ("s1", 2), ("s2", 2)]
    assert len(plan) == 6
    assert [(p.scenario.id, p.epoch) for p in plan] == expected
    assert [(plan[i].scenario.id, plan[i].epoch) for i in range(6)] == expected
    assert (plan[-1].scenario.id, plan[-1].epoch) == ("s2", 2)
    assert [(p.scenario.id, p.epoch) for p in plan[1:6:2]] == expected[1:6:2]


def test_a_limit_keeps_the_first_scenarios_of_every_epoch() -> None:
    plan = plan_attempts(_scenarios(5), epochs=3, limit=2)
    assert [(p.scenario.id, p.epoch) for p in plan] == [
        ("s0", 1), ("s1", 1), ("s0", 2), ("s1", 2), ("s0", 3), ("s1", 3)
    ]  # fmt: skip


@pytest.mark.parametrize("index", [6, -7])
def test_reading_past_the_end_of_a_plan_is_an_index_error(index: int) -> None:
    with pytest.raises(IndexError):
        Plan(_scenarios(3), 2)[index]


def test_an_empty_plan_is_falsy() -> None:
    assert not plan_attempts(_scenarios(3), epochs=1, limit=0)
    assert not plan_attempts([], epochs=4)


def test_planned_ids_are_the_plans_attempts_in_order() -> None:
    plan = plan_attempts(_scenarios(3), epochs=2, limit=2)
    assert list(planned_ids(plan)) == [(p.scenario.id, p.epoch) for p in plan]
    assert list(planned_ids(list(plan))) == [("s0", 1), ("s1", 1), ("s0", 2), ("s1", 2)]


def test_planned_scenario_ids_go_over_the_scenarios_once_whatever_the_epochs() -> None:
    class Counted(list[Scenario]):
        reads = 0

        def __iter__(self):  # type: ignore[no-untyped-def]
            Counted.reads += 1
            return super().__iter__()

    scenarios = Counted(_scenarios(3))
    plan = Plan(scenarios, 5)
    assert planned_scenario_ids(plan) == {"s0", "s1", "s2"}
    assert Counted.reads == 1
    assert planned_scenario_ids(list(plan_attempts(_scenarios(2), epochs=3))) == {"s0", "s1"}


def test_planned_ids_of_a_lazy_benchmark_read_no_scenario(tmp_path: Path) -> None:
    """The ids come from the benchmark's index: a scenario file gone since the load (which would
    stop a read) does not matter."""
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "benchmark.yaml").write_text("name: b\nversion: '1'\n", encoding="utf-8")
    lines = [
        json.dumps({"id": f"q{i}", "stimulus": "hi", "checks": [{"type": "equals", "value": "x"}]})
        for i in range(3)
    ]
    (tmp_path / "scenarios" / "all.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    plan = plan_attempts(load_benchmark(tmp_path).scenarios, epochs=2)
    (tmp_path / "scenarios" / "all.jsonl").unlink()
    assert list(planned_ids(plan)) == [(f"q{i}", epoch) for epoch in (1, 2) for i in range(3)]
