"""Synthetic attempts for the bench scripts that fill a store directly (web pages, compare):
plausible outputs, checks and a two-event trajectory, the same for each `n`."""

from __future__ import annotations

from datetime import datetime, timedelta

from benchyard.runner.trajectory import Event
from benchyard.store.records import AttemptRecord, CheckRecord


def synthetic_attempt(run_id: str, n: int, verdict: str, t0: datetime) -> AttemptRecord:
    """Attempt `n` of run `run_id`, final, first try, with this verdict."""
    passed = verdict == "passed"
    answer = f"answer {n}: " + "lorem ipsum " * 15
    return AttemptRecord(
        id=f"{run_id}{n:016x}",
        run_id=run_id,
        scenario_id=f"scenario-{n:06d}",
        category=f"category-{n % 8}",
        epoch=1,
        try_number=1,
        verdict=verdict,
        score=float(passed),
        started_at=t0,
        finished_at=t0 + timedelta(seconds=1),
        duration_sec=0.5 + (n * 7919 % 1000) / 100,
        answer=answer,
        stdout=answer,
        stderr="",
        cause=None if passed else f"expected {n}, got something else",
        failure_kind="sandbox_start" if verdict == "error" else None,
        turns=1 + n % 4,
        tokens_in=100 + n % 50,
        tokens_out=20 + n % 30,
        cost_usd=0.0001 * (1 + n % 7),
        checks=[
            CheckRecord(0, "equals", "equals", passed, float(passed), 1.0, "compared"),
            CheckRecord(1, "contains", "contains", n % 3 != 0, float(n % 3 != 0), 1.0, "found"),
        ],
        trajectory=[
            Event(kind="message", role="user", content=f"question {n}", ts=1000.0),
            Event(
                kind="message",
                role="assistant",
                content=answer,
                ts=1001.0,
                tokens_in=100,
                tokens_out=20,
            ),
        ],
    )
