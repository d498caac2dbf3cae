"""A scenario's own content hash: its definition and the files it names (fixtures, verification
fixtures, reference files, a python grader), not the other scenarios of its file, nor the
benchmark's name or version."""

from __future__ import annotations

from pathlib import Path

import yaml

from benchyard.benchmarks.loader import load_benchmark
from tests.support import scenario, write_benchmark

GRADER = "def grade(answer, context):\n    return answer == 'c'\n"


def _scenarios() -> list[dict[str, object]]:
    return [
        scenario("a", "a", fixtures={"files": ["data/a.txt"], "verification": ["hidden/t.py"]}),
        scenario("b", "b"),
        scenario("c", "c", checks=[{"type": "python", "file": "grade.py", "function": "grade"}]),
    ]


def _hashes(root: Path) -> dict[str, str]:
    benchmark = load_benchmark(root)
    return {s.id: benchmark.scenario_hash(s) for s in benchmark.scenarios}


def _write(root: Path, scenarios: list[dict[str, object]], version: str = "1.0") -> Path:
    files = {
        "scenarios/data/a.txt": "one\n",
        "scenarios/hidden/t.py": "assert True\n",
        "scenarios/grade.py": GRADER,
        "README.md": "about\n",
    }
    return write_benchmark(root, scenarios, version=version, files=files)


def test_each_edit_changes_only_the_scenario_it_touches(tmp_path: Path) -> None:
    root = _write(tmp_path / "bench", _scenarios())
    start = _hashes(root)
    assert len(set(start.values())) == 3

    edited = _scenarios()
    edited[1] = scenario("b", "B")  # in the same file as a and c
    _write(root, edited, version="2.0")  # and a new version
    (root / "README.md").write_text("about, edited\n")  # a file no scenario names
    after_b = _hashes(root)
    assert {s for s in start if start[s] != after_b[s]} == {"b"}

    for path, changed in (
        ("scenarios/data/a.txt", "a"),  # a fixture
        ("scenarios/hidden/t.py", "a"),  # a verification fixture
        ("scenarios/grade.py", "c"),  # a check's grader
    ):
        before = _hashes(root)
        (root / path).write_text((root / path).read_text() + "# edited\n")
        after = _hashes(root)
        assert {s for s in before if before[s] != after[s]} == {changed}, path


def test_the_benchmark_defaults_count_for_every_scenario(tmp_path: Path) -> None:
    root = _write(tmp_path / "bench", _scenarios())
    start = _hashes(root)
    manifest = yaml.safe_load((root / "benchmark.yaml").read_text())
    manifest["defaults"] = {"timeout_sec": 5}
    (root / "benchmark.yaml").write_text(yaml.safe_dump(manifest))
    after = _hashes(root)
    assert all(start[s] != after[s] for s in start)
