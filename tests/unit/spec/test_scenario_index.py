"""Scenarios read lazily (spec/scenario_index.py): a benchmark read from JSONL holds no list of
scenario models, reads each again from its line as the eager load made it, chooses scenarios
without reading them, and refuses a line changed after the benchmark was read."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.api import plan_run
from benchyard.runner.execute import RunSettings
from benchyard.spec import hashing
from benchyard.spec.filters import select_scenarios
from benchyard.spec.models import DEFER_TURN_CHECKS, Scenario
from benchyard.spec.problems import BenchmarkInvalid
from benchyard.spec.scenario_index import CACHED, ScenarioFileChanged, ScenarioIndex

COUNT = 20_000


def record(i: int) -> dict[str, object]:
    return {
        "id": f"s{i:05d}",
        "category": f"c{i % 5}",
        "tags": ["even"] if i % 2 == 0 else [],
        "stimulus": f"say {i}",
        "checks": [{"type": "equals", "value": str(i)}],
        "reference": str(i),
    }


def write_jsonl(root: Path, lines: list[str]) -> Path:
    (root / "scenarios").mkdir(parents=True)
    (root / "benchmark.yaml").write_text("name: big\nversion: '1'\n", encoding="utf-8")
    (root / "scenarios" / "all.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lines = [json.dumps(record(i)) for i in range(COUNT)]
    return write_jsonl(tmp_path_factory.mktemp("big"), lines)


def eager(i: int) -> Scenario:
    return Scenario.model_validate(record(i), context={DEFER_TURN_CHECKS: True})


def scenarios_alive() -> int:
    gc.collect()
    return sum(isinstance(item, Scenario) for item in gc.get_objects())


def test_a_big_jsonl_benchmark_holds_no_list_of_scenarios(big: Path) -> None:
    before = scenarios_alive()
    benchmark = load_benchmark(big)
    assert isinstance(benchmark.scenarios, ScenarioIndex)
    assert len(benchmark.scenarios) == COUNT
    assert scenarios_alive() - before <= CACHED


def test_each_scenario_read_again_is_the_one_the_eager_load_made(big: Path) -> None:
    benchmark = load_benchmark(big)
    for i in (0, 1, 4_999, COUNT - 1):
        assert benchmark.scenarios[i] == eager(i)
    assert [s.id for s in benchmark.scenarios[10:13]] == ["s00010", "s00011", "s00012"]
    assert benchmark.scenarios[-1].id == f"s{COUNT - 1:05d}"
    assert benchmark.locations["s00007"].line == 8
    assert benchmark.scenario_dir(benchmark.scenarios[7]) == big.resolve() / "scenarios"


def test_filters_and_a_run_plan_choose_without_reading(big: Path) -> None:
    benchmark = load_benchmark(big)
    before = scenarios_alive()
    chosen = select_scenarios(benchmark.scenarios, ["category:c1", "tag:even"])
    assert isinstance(chosen, ScenarioIndex)
    assert [s.id for s in chosen[:2]] == ["s00006", "s00016"]
    assert len(chosen) == COUNT // 10
    plan = plan_run(benchmark, RunSettings(epochs=3))
    assert len(plan) == 3 * COUNT
    assert scenarios_alive() - before <= CACHED


def test_a_bad_line_among_many_is_named_by_file_line_and_field(tmp_path: Path) -> None:
    lines = [json.dumps(record(i)) for i in range(3_000)]
    lines[2_500] = json.dumps({**record(2_500), "checks": "none"})
    with pytest.raises(BenchmarkInvalid) as raised:
        load_benchmark(write_jsonl(tmp_path / "b", lines))
    [problem] = raised.value.problems
    assert (problem.file, problem.line, problem.field) == ("scenarios/all.jsonl", 2_501, "checks")


def test_a_line_changed_after_the_benchmark_was_read_is_refused(tmp_path: Path) -> None:
    root = write_jsonl(tmp_path / "b", [json.dumps(record(i)) for i in range(3)])
    benchmark = load_benchmark(root)
    file = root / "scenarios" / "all.jsonl"
    changed = json.dumps({**record(1), "reference": "2"})
    file.write_text(
        "\n".join([json.dumps(record(0)), changed, json.dumps(record(2))]) + "\n", encoding="utf-8"
    )
    with pytest.raises(ScenarioFileChanged, match=r"all\.jsonl:2 \(scenario 's00001'\)"):
        benchmark.scenarios[1]
    file.unlink()
    with pytest.raises(ScenarioFileChanged, match="cannot be read again"):
        benchmark.scenarios[2]


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n\n\n",
        b"a\r\nb\r\n\r\n",
        b"a\r",
        b"a\n\r",
        b"ab\r\ncd\n\n\nef\r\n\n",
        b"x\0y\r\n\n",
        b"\r\r\n\r\n\r",
        b"line\n" * 7 + b"\n" * 5,
    ],
)
def test_a_large_file_hashes_as_a_small_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes
) -> None:
    (tmp_path / "benchmark.yaml").write_bytes(b"name: x\n")
    (tmp_path / "data.txt").write_bytes(data)
    whole = hashing.content_hash(tmp_path)
    monkeypatch.setattr(hashing, "CHUNK", 1)  # every file larger: read a byte at a time
    assert hashing.content_hash(tmp_path) == whole
    monkeypatch.setattr(hashing, "CHUNK", 2)
    assert hashing.content_hash(tmp_path) == whole
