"""The run page's figures, computed by the database (store/browse.py, web/overview.py), are the
report's own (report/build.py, report/flags.py) on the same attempts: every summary field, every
category and check count, and every review flag, attempt by attempt."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime

import pytest

from benchyard.checks.patch_scan import SUSPICIOUS_PATCH
from benchyard.report import flags as report_flags
from benchyard.report.build import build_report
from benchyard.runner.failures import CLAIMED_KINDS, FailureKind
from benchyard.store import browse
from benchyard.store.browse import AttemptQuery, attempt_page, figure_tallies
from benchyard.store.records import AttemptRecord, CheckRecord
from benchyard.store.store import Store
from benchyard.web.overview import run_figures
from benchyard.web.rows import attempt_flags
from tests.support import attempt_record, run_record

RUN = "f1f1f1f1f1f1f1f1"
VERDICTS = ("passed", "failed", "timeout", "error", "passed", "failed", "passed")


def _attempts() -> list[AttemptRecord]:
    """Three epochs of 30 scenarios whose figures vary every way the summary counts."""
    records = []
    for n in range(90):
        scenario, epoch = n % 30, n // 30 + 1
        verdict = VERDICTS[(n * 5 + epoch) % len(VERDICTS)]
        checks = [
            CheckRecord(
                0, "equals", "equals", verdict == "passed", float(verdict == "passed"), 1.0, "r"
            ),
        ]
        if n % 4 == 0:
            checks.append(
                CheckRecord(1, "llm_rubric", "rubric", n % 8 == 0, 0.52, 1.0, "judge", 0.5)
            )
        if n % 11 == 0:
            checks.append(
                CheckRecord(
                    2, "tests", "tests", False, 0.0, 1.0, f"2 failed; {SUSPICIOUS_PATCH}conftest.py"
                )
            )
        kind = None
        if verdict == "error":
            kind = FailureKind.SANDBOX_START.value
        elif verdict == "failed" and n % 3 == 0:
            kind = sorted(CLAIMED_KINDS)[0]
        elif verdict == "failed" and n % 5 == 0:
            kind = FailureKind.REASONING_TRUNCATED.value
        records.append(
            attempt_record(
                RUN,
                f"{n:032x}",
                f"s{scenario:02d}",
                category=("alpha", "beta", "gamma")[scenario % 3],
                epoch=epoch,
                verdict=verdict,
                score=0.96 if n % 13 == 0 else float(verdict == "passed"),
                threshold=0.95 if n % 13 == 0 else None,
                negative=scenario % 7 == 0,
                # Every fifth scenario is a three-turn conversation: its scripted turns are not
                # excess, so only its turns beyond them count towards `long`.
                user_turns=3 if scenario % 5 == 2 else 1,
                turns=(12 if n % 10 == 0 else (n * 7) % 4 + 1) + (2 if scenario % 5 == 2 else 0),
                hit_max_turns=n % 17 == 0,
                tokens_in=n * 3,
                tokens_out=n,
                cost_usd=None if n % 4 == 1 else n / 1000,
                judge_cost_usd=n / 10_000 if n % 4 == 0 else None,
                judge_tokens_in=n if n % 4 == 0 else 0,
                duration_sec=((n * 37) % 23) / 3 + 0.1,
                failure_kind=kind,
                checks=checks,
                started_at=datetime(2026, 1, 1, tzinfo=UTC),
            )
        )
    records.append(
        attempt_record(
            RUN,
            "e" * 32,
            "s01",
            superseded=True,
            verdict="error",
            score=0.0,
            failure_kind=FailureKind.SANDBOX_START.value,
        )
    )
    return records


@pytest.fixture
def run_id(store: Store) -> str:
    store.create_run(run_record(RUN, planned_attempts=90, settings={"epochs": 3}))
    store.record_attempts(_attempts())
    return RUN


def test_summary_categories_and_checks_are_the_reports(store: Store, run_id: str) -> None:
    report = build_report(store, store.get_run(run_id))
    figures = run_figures(figure_tallies(store, run_id))
    got, want = figures.summary.model_dump(), report.summary.model_dump()
    floats = {"cost_usd", "judge_cost_usd", "avg_turns", "durations"}
    assert {k: v for k, v in got.items() if k not in floats} == {
        k: v for k, v in want.items() if k not in floats
    }
    assert got["cost_usd"] == pytest.approx(want["cost_usd"])
    assert got["judge_cost_usd"] == pytest.approx(want["judge_cost_usd"])
    assert got["avg_turns"] == pytest.approx(want["avg_turns"])
    assert got["durations"] == pytest.approx(want["durations"])
    assert figures.summary.retried_tries == 1 and figures.summary.claimed_faults > 0
    assert figures.summary.reasoning_truncated > 0
    assert figures.categories == report.categories
    assert figures.checks == report.checks


def _report_flags(attempts: list[AttemptRecord]) -> dict[str, set[str]]:
    """Attempt ids flagged by report/flags.py, by kind (flaky: the counted attempts of flaky
    scenarios)."""
    flagged: dict[str, set[str]] = defaultdict(set)
    counted = [a for a in attempts if a.verdict in ("passed", "failed", "timeout")]
    for flag in report_flags.review_flags(attempts):
        if flag.kind == "flaky":
            flagged["flaky"] |= {a.id for a in counted if a.scenario_id == flag.scenario_id}
        else:
            assert flag.attempt_id is not None
            flagged[flag.kind].add(flag.attempt_id)
    return flagged


def test_each_review_flag_in_sql_flags_the_reports_attempts(store: Store, run_id: str) -> None:
    attempts = store.attempts(run_id)
    expected = _report_flags(attempts)
    figures = run_figures(figure_tallies(store, run_id))
    for kind in browse.FLAG_KINDS:
        page = attempt_page(store, run_id, AttemptQuery(flag=kind, limit=500))
        assert {a.id for a in page.rows} == expected[kind], kind
        assert page.total == len(expected[kind])
    assert all(expected[kind] for kind in browse.FLAG_KINDS), "the data set raises every flag"
    flaky_scenarios = {a.scenario_id for a in attempts if a.id in expected["flaky"]}
    assert figures.flags["flaky"] == len(flaky_scenarios)
    assert figures.flags["long"] == len(expected["long"])
    anything = attempt_page(store, run_id, AttemptQuery(flag="any", limit=500))
    assert {a.id for a in anything.rows} == set().union(*expected.values())
    for attempt in attempts:
        shown = attempt_flags(attempt, figures.median_turns, attempt.scenario_id in flaky_scenarios)
        assert set(shown) == {k for k, ids in expected.items() if attempt.id in ids}, attempt.id


def test_the_flag_thresholds_are_the_reports() -> None:
    assert browse.LONG_FACTOR == report_flags.LONG_FACTOR
    assert browse.LONG_FLOOR == report_flags.LONG_FLOOR
    assert browse.NEAR_MARGIN == report_flags.NEAR_MARGIN
    assert browse.SUSPICIOUS_PATCH == SUSPICIOUS_PATCH
    assert set(browse.FLAG_KINDS) == set(
        report_flags.ReviewFlag.model_fields["kind"].annotation.__args__  # type: ignore[union-attr]
    )


def test_attempt_pages_sort_filter_and_count_in_sql(store: Store, run_id: str) -> None:
    attempts = store.attempts(run_id)
    by_duration = sorted(attempts, key=lambda a: (-a.duration_sec, a.scenario_id, a.epoch, a.id))
    pages = [
        attempt_page(
            store, run_id, AttemptQuery(sort="duration", descending=True, limit=25, offset=offset)
        )
        for offset in range(0, 100, 25)
    ]
    assert [a.id for page in pages for a in page.rows] == [a.id for a in by_duration]
    assert all(page.total == 90 for page in pages)
    failed_beta = attempt_page(
        store, run_id, AttemptQuery(verdicts=("failed", "timeout"), category="beta", limit=500)
    )
    assert {a.id for a in failed_beta.rows} == {
        a.id for a in attempts if a.verdict in ("failed", "timeout") and a.category == "beta"
    }
    rubric_failed = attempt_page(
        store, run_id, AttemptQuery(check="llm_rubric", check_outcome="failed", limit=500)
    )
    assert {a.id for a in rubric_failed.rows} == {
        a.id
        for a in attempts
        if any(c.check_type == "llm_rubric" and not c.passed for c in a.checks)
    }
    assert all(len(a.checks) >= 2 for a in rubric_failed.rows)
    by_cost = attempt_page(store, run_id, AttemptQuery(sort="cost", limit=500)).rows
    costs = [a.cost_usd for a in by_cost]
    known = [c for c in costs if c is not None]
    assert known == sorted(known) and costs[len(known) :] == [None] * (len(costs) - len(known))
    found = attempt_page(store, run_id, AttemptQuery(scenario="s1", limit=500)).rows
    assert {a.scenario_id for a in found} == {f"s{n}" for n in range(10, 20)}
