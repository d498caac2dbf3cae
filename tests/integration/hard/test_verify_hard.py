"""The `hard` benchmark is verifiable: `verify hard` executes every coding reference and decoy in
the sandbox, re-derives every math, logic and long-context answer, regenerates every haystack,
and finds nothing broken; and a case whose reference is wrong, or whose checks let a known-wrong
answer pass, is reported broken."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchyard.benchmarks.loader import load_benchmark
from benchyard.spec.library import builtin_benchmarks
from benchyard.spec.profiles import profile_sizes
from tests.support import Cli

HARD = builtin_benchmarks()["hard"]


def test_the_hard_benchmark_has_every_kind_of_case() -> None:
    hard = load_benchmark("hard")
    categories: dict[str, int] = {}
    for scenario in hard.scenarios:
        categories[scenario.category] = categories.get(scenario.category, 0) + 1
    assert len(hard.scenarios) >= 60
    assert set(categories) == {"math", "logic", "coding", "tools", "long_context", "instructions"}
    for scenario in hard.scenarios:
        verifiable = (
            scenario.derive is not None
            or scenario.decoys
            or any(check.type == "code_exec" for check in scenario.checks)
        )
        assert verifiable, f"{scenario.id} has no derivation, decoy or executed reference"
    assert profile_sizes(hard) == {"quick": 6, "standard": 18, "full": len(hard.scenarios)}


def test_long_context_text_is_generated_at_load_not_stored() -> None:
    hard = load_benchmark("hard")
    long = [s for s in hard.scenarios if s.category == "long_context"]
    assert len(long) == 8
    for scenario in long:
        tokens = len(scenario.stimulus.turns[0]) // 4
        assert 12_000 <= tokens <= 24_000, (scenario.id, tokens)
        assert scenario.stimulus.haystack is not None and scenario.stimulus.haystack.sha256
    again = load_benchmark("hard")
    assert [s.stimulus.turns for s in again.scenarios] == [s.stimulus.turns for s in hard.scenarios]
    assert (HARD / "scenarios" / "long_context.yaml").stat().st_size < 40_000


def _subset(tmp_path: Path, file: str, ids: list[str]) -> Path:
    """A copy of the hard benchmark holding only some scenarios of one file."""
    root = tmp_path / "hard-subset"
    (root / "scenarios").mkdir(parents=True)
    manifest = yaml.safe_load((HARD / "benchmark.yaml").read_text(encoding="utf-8"))
    manifest.pop("profiles")
    (root / "benchmark.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    scenarios = yaml.safe_load((HARD / "scenarios" / file).read_text(encoding="utf-8"))
    kept = [s for s in scenarios if s["id"] in ids]
    (root / "scenarios" / file).write_text(yaml.safe_dump(kept, sort_keys=False), encoding="utf-8")
    return root


def _edit(root: Path, file: str, scenario_id: str, **changes: object) -> None:
    path = root / "scenarios" / file
    scenarios = yaml.safe_load(path.read_text(encoding="utf-8"))
    for scenario in scenarios:
        if scenario["id"] == scenario_id:
            scenario.update(changes)
    path.write_text(yaml.safe_dump(scenarios, sort_keys=False), encoding="utf-8")


def test_a_wrong_answer_is_caught_by_its_derivation(storeless_cli: Cli, tmp_path: Path) -> None:
    """math-001's reference and check both say 9 (its checks pass); the brute force says 8."""
    root = _subset(tmp_path, "math.yaml", ["math-001", "math-004"])
    assert storeless_cli("verify", str(root)).exit_code == 0
    _edit(root, "math.yaml", "math-001", reference="9", checks=[{"type": "numeric", "value": 9}])

    result = storeless_cli("verify", str(root), "-j", "1")  # one scenario at a time

    assert result.exit_code == 1
    assert "broken: math-001: derive worked out '8' but the reference says '9'" in result.output
    assert "2 scenarios verified, 1 broken" in result.output
    assert "1 answer(s) re-derived" in result.output


def test_a_wrong_logic_solution_is_caught(storeless_cli: Cli, tmp_path: Path) -> None:
    root = _subset(tmp_path, "logic.yaml", ["logic-001"])
    scenario = yaml.safe_load((root / "scenarios" / "logic.yaml").read_text())[0]
    swapped = dict(scenario["checks"][1]["value"])
    swapped["1"], swapped["2"] = swapped["2"], swapped["1"]
    checks = [scenario["checks"][0], {**scenario["checks"][1], "value": swapped}]
    import json

    _edit(root, "logic.yaml", "logic-001", reference=json.dumps(swapped), checks=checks)

    result = storeless_cli("verify", str(root))

    assert result.exit_code == 1 and "broken: logic-001: derive worked out" in result.output


def test_checks_that_let_a_decoy_pass_are_caught(storeless_cli: Cli, tmp_path: Path) -> None:
    """tools-002 with its must_not_include check taken away: the decoy that issues the refund
    passes, so the case cannot tell a good agent from a bad one."""
    root = _subset(tmp_path, "tools.yaml", ["tools-002", "tools-009"])
    scenario = yaml.safe_load((root / "scenarios" / "tools.yaml").read_text())[0]
    _edit(root, "tools.yaml", "tools-002", checks=[scenario["checks"][0]])

    result = storeless_cli("verify", str(root))

    assert result.exit_code == 1
    assert "broken: tools-002: decoy 1 (a known-wrong answer) passes its checks" in result.output
    assert "1 decoy(s) rejected" in result.output  # tools-009's


def test_a_broken_coding_reference_is_caught_in_the_sandbox(
    storeless_cli: Cli, tmp_path: Path
) -> None:
    root = _subset(tmp_path, "coding.yaml", ["coding-004"])
    scenario = yaml.safe_load((root / "scenarios" / "coding.yaml").read_text())[0]
    _edit(
        root,
        "coding.yaml",
        "coding-004",
        reference=scenario["reference"].replace(" < value", " <= value"),
    )

    result = storeless_cli("verify", str(root))

    assert result.exit_code == 1 and "broken: coding-004: code_exec: a test failed" in result.output


@pytest.mark.slow
def test_verify_hard_passes_with_nothing_broken(storeless_cli: Cli) -> None:
    result = storeless_cli("verify", "hard")

    assert result.exit_code == 0, result.output
    assert "hard 1.0.0: 64 scenarios verified, 0 broken" in result.output
    assert (
        "10 reference(s) executed in the sandbox, 35 answer(s) re-derived by their derive "
        "programs, 8 haystack(s) regenerated from their seeds, 47 decoy(s) rejected"
    ) in result.output


def test_the_hard_benchmark_ships_in_the_wheel() -> None:
    """Package data: the wheel takes every file under library/ (pyproject's package-data), and the
    hard benchmark is only files there, nothing generated beside them."""
    import tomllib

    project = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    assert "library/**/*" in project["tool"]["setuptools"]["package-data"]["benchyard"]
    files = sorted(p.relative_to(HARD).as_posix() for p in HARD.rglob("*") if p.is_file())
    assert files == [
        "benchmark.yaml",
        *(f"scenarios/{name}.yaml" for name in
          ("coding", "instructions", "logic", "long_context", "math", "tools")),
    ]  # fmt: skip
