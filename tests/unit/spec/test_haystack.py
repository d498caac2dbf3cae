"""Haystacks: long text generated from a seed at load, with needles where they were put; a text
that differs from its recorded sha256, or a stimulus without a place for it, is a problem with
file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchyard.benchmarks.loader import load_benchmark
from benchyard.spec.haystack import HaystackSpec, Needle, generate, text_sha256
from benchyard.spec.problems import BenchmarkInvalid
from tests.support import write_benchmark


def test_the_same_seed_gives_the_same_text_and_needles_land_where_asked() -> None:
    spec = HaystackSpec(
        seed=7,
        words=3000,
        needles=[Needle(at=0.0, text="FIRST NEEDLE"), Needle(at=0.5, text="MIDDLE NEEDLE")],
    )
    text = generate(spec)
    lines = text.splitlines()
    assert generate(HaystackSpec.model_validate(spec.model_dump())) == text
    assert generate(spec.model_copy(update={"seed": 8})) != text
    assert lines[0] == "FIRST NEEDLE"
    middle = lines.index("MIDDLE NEEDLE")
    assert abs(middle / len(lines) - 0.5) < 0.02
    assert 3000 <= len(text.split()) < 3100
    assert text.count("NEEDLE") == 2


def _scenario(
    haystack: dict[str, object], message: str = "Read: {{haystack}}\nQ?"
) -> dict[str, object]:
    return {
        "id": "long-1",
        "stimulus": {"message": message, "haystack": haystack},
        "reference": "42",
        "checks": [{"type": "numeric", "value": 42}],
    }


def test_a_stimulus_gets_the_text_where_it_says(tmp_path: Path) -> None:
    spec = {"seed": 3, "words": 500, "needles": [{"at": 0.5, "text": "The answer is 42."}]}
    bench = load_benchmark(write_benchmark(tmp_path / "b", [_scenario(spec)]))
    (turn,) = bench.scenarios[0].stimulus.turns
    assert turn.startswith("Read: ") and turn.endswith("\nQ?") and "{{haystack}}" not in turn
    assert "The answer is 42." in turn and len(turn.split()) > 500


def test_a_changed_text_is_refused_with_its_line(tmp_path: Path) -> None:
    spec = HaystackSpec(seed=3, words=500)
    right = text_sha256(spec)
    wrong = "0" * 64
    root = write_benchmark(tmp_path / "b", [_scenario({"seed": 3, "words": 500, "sha256": wrong})])
    with pytest.raises(BenchmarkInvalid) as raised:
        load_benchmark(root)
    (problem,) = raised.value.problems
    assert str(problem).startswith("scenarios/main.yaml:")
    assert "stimulus.haystack" in str(problem)
    assert f"has sha256 {right}, not {wrong}" in str(problem)
    root2 = write_benchmark(tmp_path / "c", [_scenario({"seed": 3, "words": 500, "sha256": right})])
    assert load_benchmark(root2).scenarios[0].stimulus.haystack is not None


def test_a_haystack_needs_a_place(tmp_path: Path) -> None:
    root = write_benchmark(tmp_path / "b", [_scenario({"seed": 3, "words": 500}, message="Q?")])
    with pytest.raises(BenchmarkInvalid) as raised:
        load_benchmark(root)
    assert any("write {{haystack}}" in str(problem) for problem in raised.value.problems)


def test_derive_programs_are_checked_for_syntax(tmp_path: Path) -> None:
    scenario = {
        "id": "m",
        "stimulus": "2+2?",
        "reference": "4",
        "checks": [{"type": "numeric", "value": 4}],
        "derive": {"python": "print(2 +\n"},
    }
    with pytest.raises(BenchmarkInvalid) as raised:
        load_benchmark(write_benchmark(tmp_path / "b", [scenario]))
    (problem,) = raised.value.problems
    assert "derive.python" in str(problem) and "derive line 1" in str(problem)
