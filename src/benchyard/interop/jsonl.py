"""A run as flat JSON lines for notebooks (`pandas.read_json(path, lines=True)`): one object per
try, superseded tries included (`final` false), the run's identity repeated on each line, checks
as a list, and the trajectory only when asked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from benchyard.interop.source import ExportRefused, check_rows, iso
from benchyard.store.records import RunRecord
from benchyard.store.store import Store


def rows(store: Store, run: RunRecord, trajectories: bool = False) -> Iterator[dict[str, Any]]:
    if run.kind != "benchmark":
        raise ExportRefused(f"run {run.id[:8]} is a {run.kind} run: it has no attempts")
    base = {
        "run_id": run.id,
        "run_status": run.status,
        "benchmark": run.benchmark_name,
        "benchmark_version": run.benchmark_version,
        "benchmark_hash": run.benchmark_hash,
        "agent": run.agent_name,
        "agent_commit": run.agent_commit,
        "agent_dirty": run.agent_dirty,
        "run_started_at": iso(run.started_at),
    }
    scenario_ids = sorted({a.scenario_id for a in store.attempts(run.id, include_superseded=True)})
    for scenario_id in scenario_ids:
        tries = store.attempts(
            run.id, include_superseded=True, with_evidence=trajectories, scenario_id=scenario_id
        )
        for attempt in tries:
            row = {
                **base,
                "attempt_id": attempt.id,
                "scenario_id": attempt.scenario_id,
                "category": attempt.category,
                "epoch": attempt.epoch,
                "try_number": attempt.try_number,
                "final": not attempt.superseded,
                "verdict": attempt.verdict,
                "score": attempt.score,
                "failure_kind": attempt.failure_kind,
                "cause": attempt.cause,
                "negative": attempt.negative,
                "answer": attempt.answer,
                "turns": attempt.turns,
                "tokens_in": attempt.tokens_in,
                "tokens_out": attempt.tokens_out,
                "cost_usd": attempt.cost_usd,
                "judge_cost_usd": attempt.judge_cost_usd,
                "duration_sec": attempt.duration_sec,
                "started_at": iso(attempt.started_at),
                "finished_at": iso(attempt.finished_at),
                "checks": check_rows(attempt),
            }
            if trajectories:
                row["trajectory"] = [event.to_dict() for event in attempt.trajectory or []]
            yield row


def write(store: Store, run: RunRecord, out: TextIO, trajectories: bool = False) -> int:
    count = 0
    for row in rows(store, run, trajectories):
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        count += 1
    return count


def write_file(store: Store, run: RunRecord, path: Path, trajectories: bool = False) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        return write(store, run, out, trajectories)
