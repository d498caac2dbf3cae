"""Profiles: the built-in quick/standard/full spreads, profiles defined in benchmark.yaml, and
their problems reported with file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchyard.benchmarks.loader import load_benchmark
from benchyard.spec.problems import BenchmarkInvalid
from benchyard.spec.profiles import UnknownProfile, profile_sizes, select_profile
from tests.support import write_benchmark


def _bench(root: Path, profiles: dict[str, object] | None = None) -> Path:
    scenarios = [
        {"id": f"{category}-{i}", "category": category, "stimulus": "x", "reference": "x",
         "checks": [{"type": "equals", "value": "x"}], "tags": ["odd"] if i % 2 else []}
        for category in ("alpha", "beta")
        for i in range(10)
    ]  # fmt: skip
    write_benchmark(root, scenarios)
    if profiles is not None:
        manifest = yaml.safe_load((root / "benchmark.yaml").read_text())
        manifest["profiles"] = profiles
        (root / "benchmark.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


def test_built_in_profiles_spread_over_each_category(tmp_path: Path) -> None:
    bench = load_benchmark(_bench(tmp_path / "b"))

    quick = [s.id for s in select_profile(bench, "quick")]
    assert quick == ["alpha-0", "alpha-9", "beta-0", "beta-9"]
    standard = [s.id for s in select_profile(bench, "standard")]
    assert len(standard) == 16 and standard[:8] == [f"alpha-{i}" for i in (0, 1, 3, 4, 5, 6, 8, 9)]
    assert len(select_profile(bench, "full")) == len(select_profile(bench, None)) == 20
    assert profile_sizes(bench) == {"quick": 4, "standard": 16, "full": 20}


def test_profiles_defined_in_the_manifest(tmp_path: Path) -> None:
    bench = load_benchmark(
        _bench(
            tmp_path / "b",
            {
                "quick": {"per_category": 1, "description": "one each"},
                "odd-beta": {"filters": ["category:beta", "tag:odd"]},
                "smoke": {"ids": ["beta-3", "alpha-2"]},
            },
        )
    )

    assert [s.id for s in select_profile(bench, "quick")] == ["alpha-0", "beta-0"]
    assert [s.id for s in select_profile(bench, "odd-beta")] == [
        f"beta-{i}" for i in (1, 3, 5, 7, 9)
    ]
    assert [s.id for s in select_profile(bench, "smoke")] == ["beta-3", "alpha-2"]
    assert list(profile_sizes(bench)) == ["standard", "quick", "odd-beta", "smoke", "full"]
    with pytest.raises(UnknownProfile, match=r"no profile 'nightly'.*profiles: standard, quick"):
        select_profile(bench, "nightly")


def test_profile_problems_name_file_line_and_field(tmp_path: Path) -> None:
    root = _bench(
        tmp_path / "b",
        {"bad name!": {"per_category": 1}, "wrong": {"per_categroy": 2}},
    )
    with pytest.raises(BenchmarkInvalid) as raised:
        load_benchmark(root)
    shown = [str(problem) for problem in raised.value.problems]
    text = (root / "benchmark.yaml").read_text().splitlines()
    line = next(number for number, row in enumerate(text, 1) if "per_categroy" in row)

    assert f"benchmark.yaml:{line}: profiles.wrong.per_categroy: unknown field" in shown
    assert any("profiles.bad name!: 'bad name!' does not match the pattern" in p for p in shown)


def test_profile_cross_checks_name_their_lines(tmp_path: Path) -> None:
    root = _bench(
        tmp_path / "b",
        {
            "smoke": {"ids": ["alpha-1", "gamma-1"]},
            "typo": {"filters": ["categroy:alpha"]},
            "empty": {"filters": ["category:gamma"]},
            "full": {"per_category": 1},
        },
    )
    with pytest.raises(BenchmarkInvalid) as raised:
        load_benchmark(root)
    shown = sorted(str(problem) for problem in raised.value.problems)
    text = (root / "benchmark.yaml").read_text().splitlines()

    def line_of(needle: str) -> int:
        return next(number for number, line in enumerate(text, 1) if needle in line)

    assert (
        f"benchmark.yaml:{line_of('gamma-1')}: profiles.smoke.ids[1]: no scenario 'gamma-1'"
        in shown
    )
    assert any(
        p.startswith(
            f"benchmark.yaml:{line_of('categroy')}: profiles.typo.filters[0]: unknown filter key"
        )
        for p in shown
    ), shown
    assert any("profiles.empty: selects no scenario" in p for p in shown), shown
    assert any("profiles.full: 'full' is every scenario" in p for p in shown), shown
