"""`compare`: flips first, paired accuracy delta and McNemar, category and cost deltas, version
checks, and `--fail-on-regression` on a significant drop and on a drop within noise."""

from __future__ import annotations

import json

import pytest

from benchyard.report.compare import CompareRefused, compare_runs
from benchyard.store.store import Store
from tests.support import Cli
from tests.unit.report.records import Row, write_run

SCENARIOS = [f"s{i:02d}" for i in range(40)]


def _run(store: Store, run_id: str, failing: set[str], minutes: int, **run: object) -> str:
    rows = [
        Row(
            sid,
            "failed" if sid in failing else "passed",
            category=f"c{int(sid[1:]) % 2}",
            cost_usd=0.01,
        )
        for sid in SCENARIOS
    ]
    return write_run(store, run_id, rows, minutes=minutes, **run)


@pytest.fixture
def runs(store: Store) -> dict[str, str]:
    return {
        "baseline": _run(store, "a" * 16, {"s39"}, 0),
        # ten pass -> fail: McNemar p = 2 / 2^10 = 0.00195
        "regressed": _run(store, "b" * 16, {"s39", *SCENARIOS[:10]}, 1),
        # three pass -> fail and one fail -> pass: p = 2 * (1 + 4) / 16 = 0.625
        "noisy": _run(store, "c" * 16, {"s00", "s01", "s02"}, 2),
    }


def test_comparison_figures(store: Store, runs: dict[str, str]) -> None:
    comparison = compare_runs(
        store, [store.get_run(runs[k]) for k in ("baseline", "regressed", "noisy")]
    )
    regressed, noisy = comparison.candidates
    assert (regressed.paired, regressed.pass_to_fail, regressed.fail_to_pass) == (40, 10, 0)
    assert regressed.accuracy_delta == pytest.approx(-0.25)
    assert regressed.mcnemar_p == pytest.approx(2 / 1024)
    assert regressed.significant_regression and not noisy.significant_regression
    assert (noisy.pass_to_fail, noisy.fail_to_pass, noisy.mcnemar_p) == (3, 1, pytest.approx(0.625))
    low, high = noisy.accuracy_delta_ci95 or (0.0, 0.0)
    assert low < noisy.accuracy_delta < 0 < high  # a drop, but 0 is inside the interval
    assert regressed.categories["c0"].delta == pytest.approx(-5 / 20)  # s00..s08 even: 5 flips
    assert regressed.categories["c1"].raw == "14/20"
    assert regressed.cost_delta_usd == pytest.approx(0.0)
    rows = [(row.scenario_id, row.flips) for row in comparison.scenarios]
    assert rows[:3] == [
        ("s00", ["pass_to_fail", "pass_to_fail"]),
        ("s01", ["pass_to_fail", "pass_to_fail"]),
        ("s02", ["pass_to_fail", "pass_to_fail"]),
    ]
    flips = [row.flips for row in comparison.scenarios]
    first_rise = next(
        n for n, f in enumerate(flips) if "fail_to_pass" in f and "pass_to_fail" not in f
    )
    assert all("pass_to_fail" in f for f in flips[:first_rise])  # pass -> fail first
    assert comparison.scenarios[first_rise].scenario_id == "s39"  # then fail -> pass
    assert all(not any(f) for f in flips[first_rise + 1 :])  # then the rest


def test_fail_on_regression_only_when_significant(cli: Cli, runs: dict[str, str]) -> None:
    significant = cli("compare", runs["baseline"], runs["regressed"], "--fail-on-regression")
    assert significant.exit_code == 1
    assert "significant regression" in significant.output
    noise = cli(
        "compare", runs["baseline"], runs["noisy"], "--fail-on-regression", "--format", "md"
    )
    assert noise.exit_code == 0, noise.output
    assert "no significant change (McNemar p = 0.625" in noise.output
    strict = cli(
        "compare", runs["baseline"], runs["regressed"], "--fail-on-regression", "--alpha", "0.001"
    )
    assert strict.exit_code == 0  # p = 0.00195 is not below 0.001


def test_compare_json_and_markdown(cli: Cli, runs: dict[str, str]) -> None:
    payload = json.loads(
        cli("compare", runs["baseline"], runs["regressed"], "--format", "json").output
    )
    assert payload["baseline"]["id"] == runs["baseline"]
    [candidate] = payload["candidates"]
    assert candidate["pass_to_fail"] == 10 and candidate["significant_regression"] is True
    assert payload["scenarios"][0]["verdicts"] == ["passed", "failed"]
    text = cli(
        "compare", runs["baseline"], runs["regressed"], "--format", "md", "--flips-only"
    ).output
    assert "| s00 | 1 | c0 | passed | failed pass → fail |" in text
    assert "| s20 |" not in text  # unchanged rows left out


def test_different_benchmark_versions_are_refused(
    store: Store, cli: Cli, runs: dict[str, str]
) -> None:
    other = _run(store, "d" * 16, set(), 3, benchmark_version="2")
    with pytest.raises(CompareRefused, match="different version"):
        compare_runs(store, [store.get_run(runs["baseline"]), store.get_run(other)])
    refused = cli("compare", runs["baseline"], other)
    assert refused.exit_code == 2
    assert "--allow-version-mismatch" in refused.output
    assert cli("compare", runs["baseline"], other, "--allow-version-mismatch").exit_code == 0


def test_history_lists_runs_oldest_first(cli: Cli, runs: dict[str, str]) -> None:
    points = json.loads(cli("history", "b", "--format", "json").output)
    assert [p["id"] for p in points] == [runs["baseline"], runs["regressed"], runs["noisy"]]
    assert [p["passed"] for p in points] == [39, 29, 37]
    assert points[0]["accuracy_ci95"][0] < 39 / 40 < points[0]["accuracy_ci95"][1]
    assert points[0]["cost_usd"] == pytest.approx(0.4)
    assert json.loads(cli("history", "b", "--agent", "nobody", "--format", "json").output) == []
