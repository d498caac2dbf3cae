"""Flags for human review, and pass@k / pass^k with epochs, in the report and its JSON."""

from __future__ import annotations

import pytest

from benchyard.checks.patch_scan import scan_patch, suspicious_note
from benchyard.report.build import build_report
from benchyard.report.render import to_markdown
from benchyard.store.records import CheckRecord
from benchyard.store.store import Store
from tests.unit.report.records import Row, write_run


def _check(score: float, threshold: float | None) -> CheckRecord:
    return CheckRecord(
        0, "llm_rubric", "rubric", score >= (threshold or 1), score, 1.0, "r", threshold
    )


def test_flags_for_review(store: Store) -> None:
    rows = [
        Row("steady", "passed", epoch=1, turns=2),
        Row("steady", "passed", epoch=2, turns=2),
        Row("flaky", "passed", epoch=1, turns=2),
        Row("flaky", "failed", epoch=2, turns=2),
        Row("long", "passed", epoch=1, turns=5),  # 4 extra turns > 2 x the median 1 extra
        Row("long", "passed", epoch=2, turns=3, hit_max_turns=True),  # 2 extra: not over 2 x 1
        # A conversation's scripted user turns are not excess: 4 turns for 3 scripted is 1 extra.
        Row("chat", "passed", epoch=1, turns=4, user_turns=3),
        Row("chat", "passed", epoch=2, turns=6, user_turns=3),  # 3 extra > 2 x 1: long
        Row("judged", "passed", epoch=1, turns=2, checks=[_check(0.72, 0.7)]),  # within 0.05
        Row("judged", "passed", epoch=2, turns=2, checks=[_check(0.9, 0.7)]),
        Row("perfect", "passed", epoch=1, turns=2, checks=[_check(1.0, 1.0)]),  # not partial
        Row("weighted", "passed", epoch=1, turns=2, score=0.52, threshold=0.5),
        Row("weighted", "failed", epoch=2, turns=2, score=0.2, threshold=0.5),
        Row("broken", "error", epoch=1, turns=0),
    ]
    report = build_report(store, store.get_run(write_run(store, "f" * 16, rows)))
    found = [(f.kind, f.scenario_id, f.epoch) for f in report.flags]
    assert found == [
        ("long", "chat", 2),
        ("flaky", "flaky", None),
        ("near_threshold", "judged", 1),
        ("long", "long", 1),
        ("hit_max_turns", "long", 2),
        ("flaky", "weighted", None),
        ("near_threshold", "weighted", 1),
    ]
    details = {(f.kind, f.scenario_id): f.detail for f in report.flags}
    assert details[("flaky", "flaky")] == "passed 1 of 2 epochs"
    assert details[("long", "long")] == (
        "5 turns for 1 scripted user turn: 4 beyond them, over 2 (2x the run's median of 1, "
        "counted as at least 1)"
    )
    assert details[("long", "chat")].startswith("6 turns for 3 scripted user turns: 3 beyond")
    assert details[("near_threshold", "judged")] == "rubric: score 0.720, threshold 0.7"
    assert details[("near_threshold", "weighted")] == "scenario score: score 0.520, threshold 0.5"
    dumped = report.model_dump(mode="json")
    assert dumped["flags"][1] == {
        "kind": "flaky",
        "scenario_id": "flaky",
        "epoch": None,
        "attempt_id": None,
        "detail": "passed 1 of 2 epochs",
    }
    text = to_markdown([report])
    assert "## Flags for review in run ffffffff (7)" in text
    assert "- hit_max_turns: **long** (epoch 2): wanted another turn after 3 turns" in text


def test_pass_at_k_and_pass_hat_k_in_the_report(store: Store) -> None:
    verdicts = {
        "a": ["passed", "passed", "passed"],  # n=3, c=3
        "b": ["passed", "failed", "passed"],  # n=3, c=2
        "c": ["failed", "error", "failed"],  # n=2, c=0: the error is not counted
    }
    rows = [Row(sid, v, epoch=e) for sid, vs in verdicts.items() for e, v in enumerate(vs, 1)]
    report = build_report(store, store.get_run(write_run(store, "e" * 16, rows)))
    repeated = report.repeated
    assert repeated is not None and repeated.epochs == 3
    assert {sid: (s.successes, s.attempts) for sid, s in repeated.scenarios.items()} == {
        "a": (3, 3),
        "b": (2, 3),
        "c": (0, 2),
    }
    by_k = [(r.k, r.pass_at_k, r.pass_hat_k, r.scenarios) for r in repeated.by_k]
    # k=1: mean(1, 2/3, 0) both ways; k=2: pass@2 = mean(1, 1 - C(1,2)/C(3,2), 1 - C(2,2)/C(2,2)),
    # pass^2 = mean(1, C(2,2)/C(3,2), 0); k=3: only a and b have three counted attempts.
    assert by_k == [
        (1, pytest.approx(5 / 9), pytest.approx(5 / 9), 3),
        (2, pytest.approx(2 / 3), pytest.approx(4 / 9), 3),
        (3, pytest.approx(1.0), pytest.approx(0.5), 2),
    ]
    assert "| 2 | 66.7% | 44.4% | 3 |" in to_markdown([report])


def test_one_epoch_has_no_repeated_section(store: Store) -> None:
    report = build_report(store, store.get_run(write_run(store, "d" * 16, [Row("a", "passed")])))
    assert report.repeated is None
    assert report.model_dump(mode="json")["repeated"] is None


RUN_PATCH = (
    "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,1 +1,2 @@\n"
    " import unittest\n+unittest.TestCase.run = lambda self, result=None: None\n"
)


def test_a_patch_that_changes_the_test_machinery_is_flagged_once(store: Store) -> None:
    note = suspicious_note(scan_patch(RUN_PATCH))  # as the tests and diff_quality checks note it
    noted = [
        CheckRecord(0, "tests", "tests", True, 1.0, 1.0, f"patch applied (1 file); ...{note}"),
        CheckRecord(1, "diff_quality", "diff_quality", True, 1.0, 1.0, f"patch applies{note}"),
    ]
    clean = [CheckRecord(0, "tests", "tests", True, 1.0, 1.0, "patch applied (1 file); ...")]
    rows = [Row("forged", "passed", checks=noted), Row("honest", "passed", checks=clean)]
    report = build_report(store, store.get_run(write_run(store, "c" * 16, rows)))
    assert [(f.kind, f.scenario_id, f.epoch, f.detail) for f in report.flags] == [
        (
            "suspicious_patch",
            "forged",
            1,
            "tests: calc.py:2: replaces part of the test framework (unittest.TestCase.run =)",
        )
    ]
    assert "- suspicious_patch: **forged** (epoch 1): tests: calc.py:2:" in to_markdown([report])
