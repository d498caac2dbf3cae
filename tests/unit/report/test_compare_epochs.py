"""compare and history with epochs: a scenario's epochs are not independent, so the accuracy
delta's interval and test are cluster-robust by scenario, each run's accuracy interval too, and
the output says which test ran, why, and the smallest difference it could have detected."""

from __future__ import annotations

import json

import pytest

from benchyard.report.compare import compare_runs
from benchyard.store.store import Store
from tests.support import Cli
from tests.unit.report.records import Row, write_run

SCENARIOS = [f"s{i}" for i in range(10)]
EPOCHS = 3


def _run(store: Store, run_id: str, failing: set[str], minutes: int) -> str:
    """Every epoch of a scenario has the same verdict: the epochs agree within a scenario."""
    rows = [
        Row(sid, "failed" if sid in failing else "passed", epoch=epoch)
        for sid in SCENARIOS
        for epoch in range(1, EPOCHS + 1)
    ]
    return write_run(store, run_id, rows, minutes=minutes, settings={"epochs": EPOCHS})


@pytest.fixture
def pair(store: Store) -> tuple[str, str]:
    # baseline: s3 fails; candidate: s0, s1, s2 fail and s3 passes, in all 3 epochs
    return _run(store, "a" * 16, {"s3"}, 0), _run(store, "b" * 16, {"s0", "s1", "s2"}, 1)


def test_epochs_make_the_interval_and_test_clustered_as_statsmodels_0_15(
    store: Store, pair: tuple[str, str]
) -> None:
    comparison = compare_runs(store, [store.get_run(run) for run in pair])
    [candidate] = comparison.candidates
    assert (candidate.paired, candidate.pass_to_fail, candidate.fail_to_pass) == (30, 9, 3)
    assert candidate.scenarios_paired == 10
    assert candidate.test == "cluster-robust paired z-test by scenario"
    assert "not independent" in candidate.test_reason
    # By hand: per-scenario sums -3, -3, -3, +3, 0 (x6); delta -0.2, SE 0.2
    # (10/9 * 32.4 / 900 = 0.04): -0.2 -/+ 1.959964 * 0.2, p = 2 (1 - Phi(1)); statsmodels 0.15's
    # OLS(d, ones).fit(cov_type="cluster") on the 30 differences gives the same (test_significance).
    assert candidate.accuracy_delta == pytest.approx(-0.2)
    assert candidate.accuracy_delta_ci95 == pytest.approx((-0.591993, 0.191993), abs=1e-6)
    assert candidate.p_value == pytest.approx(0.317311, abs=1e-6)
    assert candidate.minimum_detectable_effect == pytest.approx(0.560317, abs=1e-6)  # 2.8016 SE
    # The naive interval takes the 30 pairs as independent: Newcombe's on (18, 9, 3, 0)
    assert candidate.naive_accuracy_delta_ci95 == pytest.approx((-0.403307, 0.026442), abs=1e-6)
    low, high = candidate.accuracy_delta_ci95 or (0.0, 0.0)
    naive_low, naive_high = candidate.naive_accuracy_delta_ci95 or (0.0, 0.0)
    assert high - low > naive_high - naive_low  # the epochs agree within a scenario: wider
    assert candidate.mcnemar_p == pytest.approx(598 / 4096)  # still reported, not the test
    # each run's accuracy interval is clustered too: 21/30 with three scenarios at 0/3
    assert candidate.run.accuracy_ci95 == pytest.approx((0.400611, 0.999389), abs=1e-6)
    assert candidate.run.accuracy_ci95_method == "cluster-robust by scenario"


def test_one_epoch_keeps_mcnemar_and_says_why(store: Store, cli: Cli) -> None:
    rows = [Row(sid, "passed") for sid in SCENARIOS]
    base = write_run(store, "c" * 16, rows)
    other = write_run(
        store, "d" * 16, [Row(r.scenario_id, "failed") if r.scenario_id < "s2" else r for r in rows]
    )
    [candidate] = compare_runs(store, [store.get_run(base), store.get_run(other)]).candidates
    assert candidate.test == "exact McNemar" and "independent" in candidate.test_reason
    shown = cli("compare", base, other, "--format", "md").output
    assert "test: exact McNemar (one pair per scenario: the pairs are independent" in shown
    assert "smallest difference detectable with power 0.8 at alpha 0.05: ±39.6 pts" in shown
    assert candidate.p_value == candidate.mcnemar_p == pytest.approx(0.5)  # 2 * 1/4
    # SE sqrt(2)/10 = 0.141421, times 2.801585
    assert candidate.minimum_detectable_effect == pytest.approx(0.396204, abs=1e-6)
    assert candidate.run.accuracy_ci95_method == "wilson"


def test_the_cli_says_which_test_ran_and_why(cli: Cli, pair: tuple[str, str]) -> None:
    table = cli("compare", *pair)
    assert table.exit_code == 0, table.output
    flat = " ".join(table.output.split())
    assert "no significant change (clustered paired test p = 0.3173" in flat
    assert (
        "test: cluster-robust paired z-test by scenario (epochs: 30 pairs in 10 scenarios" in flat
    )
    assert "smallest difference detectable with power 0.8 at alpha 0.05: ±56.0 pts" in flat
    markdown = cli("compare", *pair, "--format", "md").output
    assert "naive Newcombe -40.3 to +2.6 pts" in markdown
    assert "| 0.3173 (clustered paired test) | ±56.0 pts |" in markdown
    payload = json.loads(cli("compare", *pair, "--format", "json").output)
    [candidate] = payload["candidates"]
    assert candidate["test"] == "cluster-robust paired z-test by scenario"
    assert candidate["accuracy_delta_ci95_method"] == "cluster-robust by scenario"
    assert candidate["minimum_detectable_effect"] == pytest.approx(0.560317, abs=1e-6)


def test_history_draws_each_runs_interval(cli: Cli, pair: tuple[str, str]) -> None:
    points = json.loads(cli("history", "b", "--format", "json").output)
    assert [p["accuracy_ci95_method"] for p in points] == ["cluster-robust by scenario"] * 2
    assert points[1]["accuracy_ci95"] == pytest.approx([0.400611, 0.999389], abs=1e-6)
    markdown = cli("history", "b", "--format", "md").output
    # 70% in [40.1%, 99.9%] on 20 cells of 5 points: the bar from cell 8 to 19, the dot at 14
    assert "| 40.1-99.9% (clustered) | ········│─────●────│ |" in markdown
