"""Runs written straight to the store, attempt by attempt, for report and comparison tests."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from benchyard.store.records import CheckRecord
from benchyard.store.store import Store
from tests.support import attempt_record, run_record

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@dataclass
class Row:
    scenario_id: str
    verdict: str
    epoch: int = 1
    category: str = "general"
    turns: int = 1
    user_turns: int = 1
    score: float | None = None
    threshold: float | None = None
    checks: list[CheckRecord] = field(default_factory=list)
    hit_max_turns: bool = False
    cost_usd: float | None = None
    duration_sec: float = 1.0


def write_run(
    store: Store, run_id: str, rows: Iterable[Row], *, minutes: int = 0, **run: object
) -> str:
    """A finished run with one final attempt per row; `minutes` orders runs in time."""
    rows = list(rows)
    store.create_run(
        run_record(
            run_id, started_at=T0 + timedelta(minutes=minutes), planned_attempts=len(rows), **run
        )
    )
    store.record_attempts(
        [
            attempt_record(
                run_id,
                f"{run_id}{n:016x}",
                row.scenario_id,
                category=row.category,
                epoch=row.epoch,
                verdict=row.verdict,
                score=row.score if row.score is not None else float(row.verdict == "passed"),
                duration_sec=row.duration_sec,
                turns=row.turns,
                user_turns=row.user_turns,
                threshold=row.threshold,
                checks=row.checks,
                hit_max_turns=row.hit_max_turns,
                cost_usd=row.cost_usd,
                cause=None if row.verdict == "passed" else "wrong",
            )
            for n, row in enumerate(rows)
        ]
    )
    return run_id
