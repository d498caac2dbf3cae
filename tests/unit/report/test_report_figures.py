"""Report figures against a run whose numbers were computed by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from rich.console import Console

from benchyard.report.build import build_report
from benchyard.report.render import to_markdown, to_rich
from benchyard.report.stats import percentile, wilson_interval
from benchyard.store.records import AttemptRecord, CheckRecord, RunRecord
from benchyard.store.store import Store
from tests.support import run_record

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

# (scenario, category, verdict, negative, turns, duration, tokens in, tokens out, cost, check passed)
ROWS = [
    ("m1", "math", "passed", False, 1, 1.0, 10, 1, 0.01, True),
    ("m2", "math", "passed", False, 1, 2.0, 10, 1, 0.01, True),
    ("m3", "math", "passed", False, 2, 3.0, 10, 1, 0.01, True),
    ("m4", "math", "passed", False, 1, 4.0, 10, 1, 0.01, True),
    ("m5", "math", "passed", True, 1, 5.0, 10, 1, 0.01, True),
    ("m6", "math", "failed", True, 3, 6.0, 10, 1, 0.01, False),
    ("t1", "text", "passed", False, 1, 7.0, 20, 2, None, True),
    ("t2", "text", "passed", False, 1, 8.0, 20, 2, None, True),
    ("t3", "text", "passed", False, 1, 9.0, 20, 2, None, True),
    ("t4", "text", "timeout", False, 4, 10.0, 20, 2, None, None),
    ("t5", "text", "error", False, 0, 11.0, 0, 0, None, None),
    ("t6", "text", "error", True, 0, 12.0, 0, 0, None, None),
]


def _run(store: Store) -> RunRecord:
    run = run_record(
        "feedc0de00000001",
        benchmark_name="hand",
        started_at=T0,
        planned_attempts=12,
        agent_commit="0123456789abcdef",
        agent_dirty=True,
    )
    store.create_run(run)
    records = []
    for n, (sid, category, verdict, negative, turns, seconds, tin, tout, cost, check) in enumerate(
        ROWS
    ):
        checks = (
            []
            if check is None
            else [CheckRecord(0, "equals", "equals", check, float(check), 1.0, "r")]
        )
        records.append(
            AttemptRecord(
                id=f"{n:032x}",
                run_id=run.id,
                scenario_id=sid,
                category=category,
                epoch=1,
                try_number=2 if sid == "t1" else 1,
                verdict=verdict,
                score=1.0 if verdict == "passed" else 0.0,
                started_at=T0,
                finished_at=T0 + timedelta(seconds=seconds),
                duration_sec=seconds,
                negative=negative,
                turns=turns,
                tokens_in=tin,
                tokens_out=tout,
                cost_usd=cost,
                cause=None if verdict == "passed" else f"{sid} went wrong | *badly*",
                checks=checks,
            )
        )
    superseded = AttemptRecord(
        id="f" * 32,
        run_id=run.id,
        scenario_id="t1",
        category="text",
        epoch=1,
        try_number=1,
        verdict="error",
        score=0.0,
        started_at=T0,
        finished_at=T0,
        duration_sec=0.5,
        superseded=True,
        cause="flaky",
    )
    store.record_attempts([*records, superseded])
    return run


def test_summary_matches_hand_computed_figures(store: Store) -> None:
    report = build_report(store, _run(store))
    s = report.summary
    assert (s.task_count, s.attempt_count) == (12, 12)
    assert (s.passed, s.failed, s.timeouts, s.errors, s.counted) == (8, 1, 1, 2, 10)
    assert s.accuracy == pytest.approx(0.8)
    assert s.accuracy_ci95 == pytest.approx(
        (0.4902, 0.9433), abs=1e-4
    )  # Wilson, 8/10, published tables
    assert s.avg_turns == pytest.approx(
        16 / 10
    )  # turns of the counted attempts: 1+1+2+1+1+3+1+1+1+4
    assert s.negative_count == 2  # m5 and m6; t6 is an error and is not counted
    assert s.false_positive_rate == pytest.approx(0.5)
    assert s.retried_tries == 1
    assert (s.tokens_in, s.tokens_out) == (140, 14)
    assert s.cost_usd == pytest.approx(0.06)
    assert s.durations.p50_sec == pytest.approx(6.5)
    assert s.durations.p90_sec == pytest.approx(10.9)
    assert s.durations.max_sec == 12.0
    assert report.categories["math"].raw == "5/6"
    assert report.categories["text"].raw == "3/4"
    assert (report.categories["text"].errors, report.categories["text"].timeouts) == (2, 1)
    assert (report.categories["text"].attempts, report.categories["math"].errors) == (6, 0)
    assert s.error_rate == pytest.approx(2 / 12)
    assert s.accuracy_if_errors_failed == pytest.approx(8 / 12)
    assert s.claimed_faults == 0
    assert report.checks["equals"].passed == 8
    assert report.checks["equals"].total == 9
    assert [f.scenario_id for f in report.failures] == ["m6", "t4", "t5", "t6"]
    assert report.failures[1].verdict == "timeout"


def test_markdown_has_one_row_per_run_and_escapes_causes(store: Store) -> None:
    report = build_report(store, _run(store))
    text = to_markdown([report, report])
    rows = [line for line in text.splitlines() if line.startswith("| feedc0de")]
    assert len(rows) == 2
    assert rows[0].split(" | ")[1:10] == [
        "a",
        "0123456789+dirty",
        "80.0%",
        "2 of 12 (16.7%)",  # errors beside accuracy
        "49.0-94.3%",
        "1.60",
        "50.0%",
        "5/6",
        "3/4 + 2 errors",
    ]
    assert "m6 went wrong \\| \\*badly\\*" in text
    assert "| *badly*" not in text


def test_errors_are_beside_accuracy_in_every_rendering(store: Store) -> None:
    """Per category in Markdown, JSON and the table, and in a summary line no reader can miss."""
    report = build_report(store, _run(store))
    text = to_markdown([report])
    assert (
        "**Errors in run feedc0de: 2 of 12 (16.7%) final attempts are errors, left out of "
        "accuracy; counted as failures, accuracy would be 66.7%"
    ) in text
    assert "| category | passed/counted | accuracy | 95% CI | errors | timeouts |" in text
    assert "| text | 3/4 | 75.0% | 30.1-95.4% | 2 of 6 (33.3%) | 1 |" in text
    assert "| math | 5/6 | 83.3% | 43.6-97.0% | 0 | 0 |" in text
    categories = report.model_dump(mode="json")["categories"]
    assert (categories["text"]["errors"], categories["text"]["attempts"]) == (2, 6)

    console = Console(width=200, record=True)
    for renderable in to_rich(report):
        console.print(renderable)
    table = console.export_text()
    assert "8/10 counted, 2 errors left out" in table
    assert "errors           2 of 12 (16.7%) final attempts are errors" in table
    assert (
        "│ text     │ 3/4            │ 75.0%    │ 30.1-95.4% │ 2 of 6 (33.3%) │ 1        │" in table
    )


def test_wilson_and_percentile_edge_cases() -> None:
    assert wilson_interval(0, 0) is None
    low, high = wilson_interval(0, 10) or (None, None)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert percentile([], 50) is None
    assert percentile([3.0], 99) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
