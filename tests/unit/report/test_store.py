"""Run references: ids, unique prefixes, latest and latest~N."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from benchyard.store.records import RunRecord
from benchyard.store.store import RunNotFound, Store


def _add(store: Store, run_id: str, minutes: int) -> None:
    store.create_run(
        RunRecord(
            id=run_id,
            status="finished",
            benchmark_name="b",
            benchmark_version="1",
            benchmark_hash="h",
            benchmark_path="/",
            agent_name="a",
            agent_config={},
            settings={},
            benchyard_version="0",
            host="h",
            started_at=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes),
            planned_attempts=0,
        )
    )


def test_run_references(store: Store) -> None:
    _add(store, "aaaa000000000001", 1)
    _add(store, "aaab000000000002", 2)
    _add(store, "bbbb000000000003", 3)
    assert store.resolve_run("latest").id == "bbbb000000000003"
    assert store.resolve_run("latest~2").id == "aaaa000000000001"
    assert store.resolve_run("bb").id == "bbbb000000000003"
    assert store.resolve_run("aaab").id == "aaab000000000002"
    assert [r.id for r in store.list_runs()] == [
        "bbbb000000000003",
        "aaab000000000002",
        "aaaa000000000001",
    ]
    with pytest.raises(RunNotFound, match="matches several runs"):
        store.resolve_run("aa")
    with pytest.raises(RunNotFound, match="no run matches 'cc'"):
        store.resolve_run("cc")
    with pytest.raises(RunNotFound, match="the store holds 3 run"):
        store.resolve_run("latest~3")
    with pytest.raises(RunNotFound, match="is not a run id"):
        store.resolve_run("'; drop table runs; --")
