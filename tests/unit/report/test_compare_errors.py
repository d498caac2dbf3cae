"""`compare` and errors: errors are left out of accuracy, so a change in them is judged apart (the
error rate's paired change with its own exact test, and accuracy again with the new errors counted
as failures), named in the headline, never called "no significant change", and a regression for
`--fail-on-regression` when it could hide one."""

from __future__ import annotations

import json

import pytest

from benchyard.report.compare import compare_runs
from benchyard.report.compare_render import verdict_line
from benchyard.report.stats import mcnemar_exact, significantly_more
from benchyard.store.store import Store
from tests.support import Cli
from tests.unit.report.records import Row, write_run

SCENARIOS = [f"s{i:02d}" for i in range(40)]


def _run(store: Store, run_id: str, minutes: int, **verdicts: str) -> str:
    """A run of the 40 scenarios: each passes unless `verdicts` says otherwise."""
    rows = [
        Row(sid, verdicts.get(sid, "passed"), category=f"c{int(sid[1:]) % 2}") for sid in SCENARIOS
    ]
    return write_run(store, run_id, rows, minutes=minutes)


def _verdicts(names: list[str], verdict: str) -> dict[str, str]:
    return dict.fromkeys(names, verdict)


def _compare(store: Store, baseline: str, candidate: str):  # type: ignore[no-untyped-def]
    comparison = compare_runs(store, [store.get_run(baseline), store.get_run(candidate)])
    return comparison.candidates[0]


def test_errors_where_an_honest_run_failed_are_a_significant_rise(store: Store, cli: Cli) -> None:
    """The attack as old runs recorded it: the honest agent answered wrong when unsure, the other
    one claimed a fault there and its tries ended as errors. Its accuracy on the counted pairs is
    as good, and the pairs with errors were left out: a significant rise in errors."""
    unsure = SCENARIOS[10:]
    honest = _run(store, "a" * 16, 0, **_verdicts(unsure, "failed"))
    hiding = _run(store, "b" * 16, 1, **_verdicts(unsure, "error"))
    candidate = _compare(store, honest, hiding)
    assert (candidate.paired, candidate.pass_to_fail, candidate.fail_to_pass) == (10, 0, 0)
    assert candidate.run.accuracy == 1.0  # 10/10 counted: "better" than the honest 10/40
    assert not candidate.significant_regression
    assert (candidate.compared, candidate.baseline_errors, candidate.errors) == (40, 0, 30)
    assert (candidate.counted_to_error, candidate.error_to_counted) == (30, 0)
    assert candidate.pass_to_error == 0  # the honest run failed all of them
    assert candidate.error_rate_delta == pytest.approx(30 / 40)
    low, high = candidate.error_rate_delta_ci95 or (0.0, 0.0)
    assert 0 < low < 0.75 < high <= 1
    assert candidate.error_p == pytest.approx(2 / 2**30)
    assert candidate.significant_error_rise and not candidate.errors_hide_regression
    assert candidate.regression

    gated = cli("compare", honest, hiding, "--fail-on-regression", "--format", "md")
    assert gated.exit_code == 1, gated.output
    assert "no significant change" not in gated.output
    assert "significant rise in errors, which accuracy leaves out: 0 → 30 errors in 40 pairs" in (
        gated.output
    )
    assert "regression: run bbbbbbbb: significant rise in errors" in gated.output  # stderr


def test_new_errors_that_could_hide_a_drop_are_a_regression(store: Store, cli: Cli) -> None:
    """Errors came and went (not a significant rise), none of the counted pairs flipped, but the
    candidate's 8 new errors are all on scenarios the baseline passed: counted as failures, that is
    a significant drop."""
    baseline = _run(store, "a" * 16, 0, **_verdicts(SCENARIOS[:4], "error"))
    candidate_id = _run(store, "b" * 16, 1, **_verdicts(SCENARIOS[4:12], "error"))
    candidate = _compare(store, baseline, candidate_id)
    assert (candidate.paired, candidate.pass_to_fail, candidate.fail_to_pass) == (28, 0, 0)
    assert (candidate.counted_to_error, candidate.pass_to_error) == (8, 8)
    assert candidate.error_to_counted == 4
    assert candidate.error_p == pytest.approx(mcnemar_exact(8, 4))  # 0.388: within noise
    assert not candidate.significant_error_rise
    assert candidate.errors_as_failures_p == pytest.approx(2 / 2**8)
    assert candidate.errors_hide_regression and candidate.regression
    assert not candidate.significant_regression  # the field keeps its meaning: counted pairs

    line = verdict_line(candidate, 0.05)
    assert line.startswith("run bbbbbbbb: possible regression hidden by errors")
    assert "rerun bbbbbbbb --failed" in line
    gated = cli("compare", baseline, candidate_id, "--fail-on-regression")
    assert gated.exit_code == 1, gated.output
    assert "no significant change" not in gated.output


def test_a_change_in_errors_within_noise_is_named_but_does_not_fail(store: Store, cli: Cli) -> None:
    baseline = _run(store, "a" * 16, 0)
    candidate_id = _run(store, "b" * 16, 1, s07="error")
    candidate = _compare(store, baseline, candidate_id)
    assert (candidate.counted_to_error, candidate.error_p) == (1, 1.0)
    assert not candidate.regression
    line = verdict_line(candidate, 0.05)
    assert line == (
        "run bbbbbbbb: errors changed, 0 → 1 errors in 40 pairs (exact paired p = 1); accuracy "
        "on the 39 pairs counted in both is within noise (McNemar p = 1, alpha 0.05)"
    )
    gated = cli("compare", baseline, candidate_id, "--fail-on-regression", "--format", "md")
    assert gated.exit_code == 0, gated.output
    assert "no significant change" not in gated.output
    # The same two runs without the error: nothing changed, and the headline says so.
    same = _run(store, "c" * 16, 2)
    assert "no significant change" in cli("compare", baseline, same).output


def test_an_improvement_that_new_errors_could_undo_is_not_called_one(store: Store) -> None:
    baseline = _run(store, "a" * 16, 0, **_verdicts(SCENARIOS[:10], "failed"))
    candidate_id = _run(store, "b" * 16, 1, **_verdicts(SCENARIOS[10:15], "error"))
    candidate = _compare(store, baseline, candidate_id)
    assert (candidate.fail_to_pass, candidate.pass_to_error) == (10, 5)
    assert candidate.significant_improvement  # on the counted pairs
    assert not candidate.regression  # 5 new errors: p = 0.0625
    assert candidate.errors_as_failures_p == pytest.approx(mcnemar_exact(5, 10))
    line = verdict_line(candidate, 0.05)
    assert "significant improvement" not in line
    assert "but not significantly with its 5 new errors counted as failures" in line


def test_comparison_json_and_tables_show_errors(store: Store, cli: Cli) -> None:
    baseline = _run(store, "a" * 16, 0, s02="error")
    candidate_id = _run(store, "b" * 16, 1, s01="failed", s03="error", s05="error")
    payload = json.loads(cli("compare", baseline, candidate_id, "--format", "json").output)
    assert (payload["baseline"]["errors"], payload["baseline"]["attempt_count"]) == (1, 40)
    [candidate] = payload["candidates"]
    assert (candidate["errors"], candidate["baseline_errors"], candidate["compared"]) == (2, 1, 40)
    assert candidate["error_rate_delta"] == pytest.approx(1 / 40)
    assert candidate["categories"]["c1"]["errors"] == 2  # s03 and s05
    assert candidate["categories"]["c0"]["baseline_errors"] == 1  # s02
    # Flips first, then the rows whose errors changed, then the rest.
    order = [row["scenario_id"] for row in payload["scenarios"]]
    assert order[:4] == ["s01", "s02", "s03", "s05"]
    text = cli("compare", baseline, candidate_id, "--format", "md", "--flips-only").output
    assert "| c1 | 20/20 100.0% | 17/18 94.4% + 2 errors | -5.6 pts |" in text
    assert "| bbbbbbbb | a | — | 97.4% | 2/40 | 86.5-99.5% |" in text
    assert "| +2.5 pts (p 1) |" in text  # the paired change of the error rate, and its test
    # --flips-only keeps the rows whose errors changed, marked.
    assert "| s02 | 1 | c0 | error | passed (was error) |" in text
    assert "| s03 | 1 | c1 | passed | error (new) |" in text
    assert "| s04 |" not in text


def test_significantly_more_is_one_sided() -> None:
    assert significantly_more(10, 0, 0.05)
    assert not significantly_more(0, 10, 0.05)
    assert not significantly_more(3, 1, 0.05)
    assert not significantly_more(10, 0, 0.001)  # p = 0.00195
