"""Runs written straight into the store, with the figures a test wants."""

from __future__ import annotations

from typing import Any

from benchyard.store.records import CheckRecord
from benchyard.store.store import Store
from tests.support import attempt_record, run_record


def details(
    predicted: int, correct: int, root_causes: int = 1, found: int | None = None, **extra: Any
) -> dict[str, Any]:
    found = correct if found is None else found
    precision = correct / predicted if predicted else (0.0 if root_causes else 1.0)
    recall = found / root_causes if root_causes else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "mode": "deterministic",
        "passed": recall >= 1 and precision >= 0.5,
        "predicted": predicted,
        "correct": correct,
        "false_positives": predicted - correct,
        "root_causes": root_causes,
        "found": found,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "confidence": extra.pop("confidence", None),
        "low_confidence": extra.pop("low_confidence", False),
        **extra,
    }


def write_run(
    store: Store,
    run_id: str,
    outcomes: list[dict[str, Any]],
    **run: Any,
) -> None:
    """One attempt per outcome: {verdict, turns, cost, details (root_cause), negative}."""
    store.create_run(run_record(run_id, planned_attempts=len(outcomes), **run))
    records = []
    for index, outcome in enumerate(outcomes):
        checks = []
        if outcome.get("details") is not None:
            found = outcome["details"]
            checks.append(
                CheckRecord(
                    0,
                    "root_cause",
                    "root_cause",
                    found["passed"],
                    found["f1"],
                    1.0,
                    "r",
                    None,
                    found,
                )
            )
        records.append(
            attempt_record(
                run_id,
                f"{run_id}-{index:03d}",
                f"s{index:03d}",
                verdict=outcome.get("verdict", "passed"),
                turns=outcome.get("turns", 4),
                cost_usd=outcome.get("cost"),
                negative=outcome.get("negative", False),
                checks=checks,
            )
        )
    store.record_attempts(records)
