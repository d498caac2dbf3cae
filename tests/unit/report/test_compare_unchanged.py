"""`compare` at scale: the rows with the same verdict in every run are counted, not listed, unless
`--all` asks; every changed row is still listed; a run's figures are its report's, read from the
few columns a comparison needs; the exact McNemar test past 1,023 discordant pairs."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

from benchyard.report.build import build_report
from benchyard.report.compare import cluster_interval, compare_runs, run_scope
from benchyard.report.history import benchmark_history
from benchyard.report.lineage import lineage_of
from benchyard.report.model import Comparison, RunFigures, RunReport
from benchyard.report.stats import mcnemar_exact
from benchyard.store.store import Store
from tests.support import Cli, attempt_record
from tests.unit.report.records import Row, write_run

# Against the baseline's epoch 1: pass -> fail, fail -> pass, a new error, an error gone, and a
# timeout that failed (a change without a flip); s11 is missing from the candidate.
CHANGED = {"s00": "failed", "s01": "passed", "s02": "error", "s04": "passed", "s03": "failed"}


def _rows(changes: dict[str, str]) -> list[Row]:
    """40 scenarios over two epochs: a pass, a failure, a timeout or an error by turns, with
    costs on some, then `changes` to epoch 1."""
    rows = []
    for n in range(40):
        sid = f"s{n:02d}"
        for epoch in (1, 2):
            verdict = ("passed", "failed", "passed", "timeout", "error")[n % 5]
            if epoch == 1:
                verdict = changes.get(sid, verdict)
            rows.append(
                Row(
                    sid,
                    verdict,
                    epoch=epoch,
                    category=f"c{n % 3}",
                    turns=1 + n % 4,
                    cost_usd=0.01 * n if n % 2 else None,
                    duration_sec=0.5 + n / 7,
                )
            )
    return rows


@pytest.fixture
def pair(store: Store) -> tuple[str, str]:
    baseline = write_run(store, "a" * 16, _rows({}), minutes=0)
    candidate = write_run(store, "b" * 16, [r for r in _rows(CHANGED) if r.scenario_id != "s11"])
    return baseline, candidate


def _compare(store: Store, pair: tuple[str, str], list_unchanged: bool) -> Comparison:
    return compare_runs(store, [store.get_run(r) for r in pair], list_unchanged=list_unchanged)


def test_unchanged_rows_are_counted_and_listed_only_when_asked(
    store: Store, pair: tuple[str, str]
) -> None:
    every = _compare(store, pair, list_unchanged=True)
    changed = _compare(store, pair, list_unchanged=False)
    differ = [row for row in every.scenarios if len(set(row.verdicts)) > 1]
    assert [(row.scenario_id, row.epoch) for row in changed.scenarios] == [
        ("s00", 1),  # pass -> fail first, then fail -> pass, then the errors that changed
        ("s01", 1),
        ("s02", 1),
        ("s04", 1),
        ("s03", 1),
        ("s11", 1),
        ("s11", 2),
    ]
    assert changed.scenarios == differ  # the same rows, in the same order
    assert (changed.unchanged, changed.unchanged_listed) == (73, False)
    assert (every.unchanged, every.unchanged_listed) == (73, True)
    assert len(every.scenarios) == 80
    # Listing the unchanged rows or not changes nothing else.
    assert changed.baseline == every.baseline and changed.candidates == every.candidates


def run_figures(report: RunReport) -> RunFigures:
    """A report's figures, as a comparison should give them."""
    run, summary = report.run, report.summary
    partial, scope = run_scope(run.parent_run_id, run.settings, len(run.merged_runs))
    interval, method = summary.accuracy_ci95, "wilson"
    if report.repeated is not None:  # epochs: each scenario's counted attempts
        tallies = report.repeated.scenarios.values()
        interval, method = cluster_interval([(t.successes, t.attempts) for t in tallies])
    return RunFigures(
        id=run.id,
        lineage=lineage_of(run.parent_run_id, run.rescored_from, run.settings),
        merged_runs=run.merged_runs,
        agent=run.agent.name,
        commit=run.agent.commit,
        dirty=run.agent.dirty,
        benchmark=run.benchmark,
        started_at=run.started_at,
        status=run.status,
        accuracy=summary.accuracy,
        accuracy_ci95=interval,
        accuracy_ci95_method=method,
        passed=summary.passed,
        counted=summary.counted,
        errors=summary.errors,
        attempt_count=summary.attempt_count,
        cost_usd=summary.cost_usd,
        avg_turns=summary.avg_turns,
        p50_sec=summary.durations.p50_sec,
        total_attempt_sec=summary.durations.total_attempt_sec,
        partial=partial,
        scope=scope,
    )


SUMS = ("cost_usd", "total_attempt_sec")  # a report's sums are the database's: equal but for the
# last bits of a float, which another order of addition can change


def assert_same(got: RunFigures, want: RunFigures) -> None:
    """The figures a comparison (or history) gives are a report's."""
    got_values, want_values = got.model_dump(), want.model_dump()
    for name in SUMS:
        assert got_values.pop(name) == pytest.approx(want_values.pop(name), rel=1e-12), name
    assert got_values == want_values


def test_figures_are_the_reports(store: Store, pair: tuple[str, str]) -> None:
    comparison = _compare(store, pair, list_unchanged=False)
    reports = [build_report(store, store.get_run(run)) for run in pair]
    assert_same(comparison.baseline, run_figures(reports[0]))
    [candidate] = comparison.candidates
    assert_same(candidate.run, run_figures(reports[1]))
    for name, delta in candidate.categories.items():
        before, after = reports[0].categories[name], reports[1].categories[name]
        assert (delta.baseline_raw, delta.raw) == (before.raw, after.raw)
        assert (delta.baseline_accuracy, delta.accuracy) == (before.accuracy, after.accuracy)
        assert (delta.baseline_errors, delta.errors) == (before.errors, after.errors)
    assert (candidate.pass_to_fail, candidate.fail_to_pass) == (1, 1)
    assert (candidate.counted_to_error, candidate.error_to_counted) == (1, 1)
    assert candidate.compared == 78  # s11 has no pair


def test_merged_figures_use_each_pairs_last_try(store: Store, pair: tuple[str, str]) -> None:
    baseline, candidate = pair
    fixed = [Row("s00", "passed", category="c0"), Row("s02", "passed", category="c2")]
    rerun = write_run(store, "c" * 16, fixed, minutes=2, parent_run_id=candidate)
    # An earlier try of the rerun, superseded by its final one: never read.
    store.record_attempts(
        [attempt_record(rerun, "d" * 16, "s02", verdict="error", try_number=0, superseded=True)]
    )
    comparison = compare_runs(
        store, [store.get_run(baseline), store.get_run(rerun)], merged=True, list_unchanged=False
    )
    [merged] = comparison.candidates
    assert merged.run == run_figures(build_report(store, store.get_run(rerun), merged=True))
    assert merged.run.scope == "all scenarios (merged over 2 runs)"
    assert [(row.scenario_id, row.verdicts) for row in comparison.scenarios] == [
        ("s01", ["failed", "passed"]),
        ("s04", ["error", "passed"]),
        ("s03", ["timeout", "failed"]),
        ("s11", ["failed", None]),
        ("s11", ["failed", None]),
    ]
    assert comparison.unchanged == 75  # s00 and s02 as the rerun left them


def test_the_cli_summarises_unchanged_rows_unless_all(cli: Cli, pair: tuple[str, str]) -> None:
    note = "73 unchanged rows (the same verdict in every run) not listed; --all lists them"
    table = cli("compare", *pair).output
    assert note in table
    assert "s01" in table and "s20" not in table
    listed = cli("compare", *pair, "--all").output
    assert "s20" in listed and "unchanged rows" not in listed
    md = cli("compare", *pair, "--format", "md").output
    assert "| s00 | 1 | c0 | passed | failed pass → fail |" in md
    assert "| s20 |" not in md and md.endswith(f"\n{note}\n")
    every_md = cli("compare", *pair, "--format", "md", "--all").output
    assert "| s20 | 1 | c2 | passed | passed |" in every_md
    payload = json.loads(cli("compare", *pair, "--format", "json").output)
    assert (payload["unchanged"], payload["unchanged_listed"]) == (73, True)
    assert len(payload["scenarios"]) == 80  # JSON lists every row: consumers may count them
    every = json.loads(cli("compare", *pair, "--format", "json", "--all").output)
    assert every == payload


@pytest.mark.parametrize(("b", "c"), [(3, 9), (400, 520), (700, 700), (1000, 1200), (2600, 2400)])
def test_mcnemar_exact_past_a_floats_range(b: int, c: int) -> None:
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    assert mcnemar_exact(b, c) == pytest.approx(min(1.0, float(Fraction(2 * tail, 2**n))))


def test_history_figures_are_the_reports(store: Store, pair: tuple[str, str]) -> None:
    runs = [store.get_run(run_id) for run_id in pair]
    points = benchmark_history(store, runs[0].benchmark_name)
    assert len(points) == len(runs)
    for point, run in zip(points, runs, strict=True):
        unchanged = point.model_copy(update={"changed_scenarios": None})
        assert_same(unchanged, run_figures(build_report(store, run)))
