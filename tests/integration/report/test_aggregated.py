"""A run's report counted by the database (report/aggregated.py) is the report folded over its
attempts one at a time (report/build.py's `_Tally`, which a merged report still uses): every
summary field, category, check, failure, review flag and pass@k, on three epochs of attempts
that vary every way a report counts."""

from __future__ import annotations

import pytest

from benchyard.report.build import build_report
from benchyard.report.model import RunReport
from benchyard.store.store import Store
from tests.integration.web.test_figures import _attempts
from tests.support import run_record

RUN = "f1f1f1f1f1f1f1f1"
SUMS = ("cost_usd", "judge_cost_usd", "durations")  # added up in another order: the last bits


def _reports(store: Store) -> tuple[RunReport, RunReport]:
    store.create_run(run_record(RUN, planned_attempts=90, settings={"epochs": 3}))
    store.record_attempts(_attempts())
    run = store.get_run(RUN)
    # `merged` over a run that re-ran nothing is the run itself, folded attempt by attempt
    return build_report(store, run), build_report(store, run, merged=True)


def test_the_databases_report_is_the_folded_one(store: Store) -> None:
    counted, folded = _reports(store)

    got, want = counted.summary.model_dump(), folded.summary.model_dump()
    for name in SUMS:
        assert got.pop(name) == pytest.approx(want.pop(name)), name
    assert got == want
    assert counted.categories == folded.categories
    assert counted.checks == folded.checks
    assert counted.failures == folded.failures and len(counted.failures) > 30
    assert counted.flags == folded.flags
    assert {flag.kind for flag in counted.flags} == {
        "long", "flaky", "near_threshold", "hit_max_turns", "suspicious_patch"
    }  # fmt: skip
    assert counted.repeated == folded.repeated and counted.repeated is not None
    assert counted.run == folded.run
