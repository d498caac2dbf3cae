"""Run references: ids, unique prefixes, latest and latest~N."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from benchyard.store.store import RunNotFound, Store
from tests.support import run_record


def _add(store: Store, run_id: str, minutes: int) -> None:
    started = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes)
    store.create_run(run_record(run_id, started_at=started))


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
