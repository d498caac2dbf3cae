"""The audit artefact's figures, on runs whose right answers a hand count gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchyard.audit.build import build_audit, mean_interval
from benchyard.audit.model import AuditArtefact
from benchyard.store.store import Store
from tests.unit.audit.helpers import details, write_run

SCHEMA = Path(__file__).resolve().parents[3] / "docs" / "audit.schema.json"


def test_root_cause_figures_and_the_false_positive_rate(store: Store) -> None:
    write_run(
        store,
        "r1",
        [
            {"verdict": "passed", "details": details(1, 1), "turns": 4, "cost": 0.10},
            {
                "verdict": "passed",
                "details": details(2, 1),
                "turns": 6,
                "cost": 0.20,
            },  # one wrong extra
            {
                "verdict": "failed",
                "details": details(1, 0),
                "turns": 5,
                "cost": 0.30,
            },  # named the wrong one
            {"verdict": "failed", "details": details(0, 0, unreadable="no JSON"), "turns": 20},
            {
                "verdict": "passed",
                "details": details(0, 0, root_causes=0),
                "turns": 3,
                "negative": True,
            },
            {"verdict": "error", "turns": 0},
        ],
        agent_config={"kind": "openai", "model": "qwen2.5-7b-instruct"},
        agent_commit="abc123",
    )
    audit = build_audit(store, store.get_run("r1"))
    assert audit.model == "qwen2.5-7b-instruct" and audit.agent.commit == "abc123"
    assert (audit.task_count, audit.attempt_count, audit.counted, audit.errors) == (6, 6, 5, 1)
    # Strict by default (issue 22, item 8): the attempt graded with a wrong extra passed under the
    # check's old lenient default; the audit no longer counts it, and shows the lenient figure apart.
    assert audit.accuracy_rule == "strict"
    assert (audit.passed, audit.accuracy) == (2, pytest.approx(2 / 5))
    assert (audit.passed_lenient, audit.accuracy_lenient) == (3, pytest.approx(3 / 5))
    assert (
        audit.accuracy_ci95 is not None and audit.accuracy_ci95.low < 0.4 < audit.accuracy_ci95.high
    )
    lenient = build_audit(store, store.get_run("r1"), rule="lenient")
    assert (lenient.accuracy_rule, lenient.accuracy) == ("lenient", pytest.approx(3 / 5))
    assert lenient.accuracy_strict == pytest.approx(2 / 5)
    # predicted 4 root causes, 2 not in the ground truth
    root = audit.root_cause
    assert root is not None
    assert (root.predicted, root.correct, root.false_positives, root.root_causes, root.found) == (
        4,
        2,
        2,
        4,
        2,
    )
    assert root.attempts_with_false_positive == 2 and root.unreadable_answers == 1
    assert audit.false_positive_basis.basis == "root_cause_entities"
    assert audit.false_positive_rate == pytest.approx(2 / 4)
    assert audit.negative_scenarios.rate == 0.0  # the report's own definition, kept apart
    assert audit.avg_turns == pytest.approx((4 + 6 + 5 + 20 + 3) / 5)
    assert audit.cost.agent_usd == pytest.approx(0.6) and audit.cost.per_task_usd == pytest.approx(
        0.1
    )
    assert [(f.kind, f.scenario_id) for f in audit.flags] == [
        ("long_turns", "s003")
    ]  # 20 > 2 x median 5
    assert [a["verdict"] for a in audit.trajectories.attempts][-1] == "error"
    assert audit.trajectories.show == "benchyard show r1 SCENARIO"


def test_without_root_cause_checks_the_negative_scenarios_define_it(store: Store) -> None:
    write_run(
        store,
        "r2",
        [
            {"verdict": "failed", "negative": True},
            {"verdict": "passed", "negative": True},
            {"verdict": "passed"},
        ],
    )
    audit = build_audit(store, store.get_run("r2"))
    assert audit.root_cause is None
    assert audit.false_positive_basis.basis == "negative_scenarios"
    assert audit.false_positive_rate == pytest.approx(0.5)


def test_low_confidence_and_judge_disagreements_are_flagged(store: Store) -> None:
    write_run(
        store,
        "r3",
        [
            {"details": details(1, 1, confidence=0.2, low_confidence=True)},
            {
                "details": details(
                    1,
                    1,
                    disagreement=True,
                    judge={"passed": False, "precision": 0.0, "recall": 0.0, "f1": 0.0},
                )
            },
            {"details": details(1, 1)},
        ],
    )
    audit = build_audit(store, store.get_run("r3"))
    assert audit.flag_counts == {"long_turns": 0, "low_confidence": 1, "judge_disagreement": 1}
    assert audit.root_cause is not None and audit.root_cause.judge_disagreements == ["s001#1"]
    assert audit.flagged_attempts == 2


def test_mean_interval_by_hand() -> None:
    interval = mean_interval([2.0, 4.0, 6.0])
    assert interval is not None
    # mean 4, sd 2, t(2) = 4.303: 4 +- 4.303 * 2 / sqrt(3)
    assert interval.low == pytest.approx(0.0) and interval.high == pytest.approx(
        4 + 4.303 * 2 / 3**0.5
    )
    assert mean_interval([3.0]) is None


def test_the_documented_schema_is_the_model_s() -> None:
    assert json.loads(SCHEMA.read_text(encoding="utf-8")) == AuditArtefact.model_json_schema()
