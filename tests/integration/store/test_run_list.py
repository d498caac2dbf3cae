"""The run listing is one set of SQL texts (store/run_list.py) that sqlite3 runs for `benchyard
runs` on a SQLite store and SQLAlchemy runs for everything else: both read the same records and
counts as the Store's typed queries do."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchyard.store import run_list
from benchyard.store.engine import sqlite_file, store_url
from benchyard.store.lite import open_at_head, plain_sqlite_file
from benchyard.store.store import Store
from tests.support import attempt_record, run_record

MOMENT = datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=UTC)


def fill(store: Store) -> None:
    store.create_run(
        run_record(
            "r1" + "0" * 30,
            agent_config={"kind": "command", "command": "python agent.py", "env": {"A": "é"}},
            agent_commit="abc123",
            agent_dirty=True,
            settings={"epochs": 2, "imported_from": {"format": "inspect", "file": "x.eval"}},
            finished_at=MOMENT,
            planned_attempts=3,
        )
    )
    store.create_run(
        run_record(
            "r2" + "0" * 30,
            status="running",
            agent_dirty=False,
            started_at=MOMENT,
            parent_run_id="r1" + "0" * 30,
            benchmark_name="other",
        )
    )
    store.create_run(run_record("r3" + "0" * 30, kind="speed", started_at=MOMENT))
    store.record_attempts(
        [
            attempt_record("r1" + "0" * 30, "a1", "s1", node="n1"),
            attempt_record("r1" + "0" * 30, "a2", "s2", verdict="error", node="n2"),
            attempt_record("r1" + "0" * 30, "a3", "s3", superseded=True, node="n1"),
            attempt_record("r2" + "0" * 30, "a4", "s1", verdict="failed"),
        ]
    )


def test_listed_runs_are_the_records_the_store_reads_one_by_one(store: Store) -> None:
    fill(store)

    listed = store.list_runs()

    assert [run.id[:2] for run in listed] == ["r3", "r2", "r1"]  # newest first, then by id
    assert listed == [store.get_run(run.id) for run in listed]
    assert [run.id[:2] for run in store.list_runs(1)] == ["r3"]
    assert [run.id[:2] for run in store.list_runs(benchmark="other")] == ["r2"]


def test_counts_leave_out_superseded_tries(store: Store) -> None:
    fill(store)
    ids = [run.id for run in store.list_runs()]

    listing = run_list.run_listing(store.reader, None, None)

    r1, r2 = "r1" + "0" * 30, "r2" + "0" * 30
    assert listing.verdicts == {r1: {"passed": 1, "error": 1}, r2: {"failed": 1}}
    assert listing.nodes == {r1: {"n1": 1, "n2": 1}}
    assert listing.speed_calls == {"r3" + "0" * 30: 0}
    assert store.verdict_counts(ids) == listing.verdicts


def test_sqlite3_reads_what_sqlalchemy_reads(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = Store.open(url)
    fill(store)

    reader = open_at_head(url)

    assert reader is not None
    try:
        assert run_list.run_listing(reader, 2, None) == run_list.run_listing(store.reader, 2, None)
        assert run_list.list_runs(reader) == [store.get_run(run.id) for run in store.list_runs()]
    finally:
        reader.close()
        store.close()


def test_only_a_store_at_the_head_revision_is_read_without_sqlalchemy(tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"
    assert open_at_head(f"sqlite:///{missing}") is None
    assert not missing.exists()  # left to Store.open, which creates it
    empty = tmp_path / "empty.db"
    empty.touch()
    assert open_at_head(f"sqlite:///{empty}") is None
    behind = tmp_path / "behind.db"
    Store.open(f"sqlite:///{behind}").close()
    with sqlite3.connect(behind) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '0001'")
    assert open_at_head(f"sqlite:///{behind}") is None


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///store.db",
        "sqlite:///sub/dir/store.db",
        "sqlite:////abs/store.db",
        "sqlite+pysqlite:////abs/store.db",
        "sqlite:////a@b:c/store.db",
    ],
)
def test_a_plain_sqlite_url_names_the_file_sqlalchemy_opens(url: str) -> None:
    assert plain_sqlite_file(url) == sqlite_file(store_url(url))


@pytest.mark.parametrize(
    "url",
    [
        "sqlite://",
        "sqlite:///:memory:",
        "sqlite:///file.db?mode=ro",
        "sqlite:///with%20space.db",
        "postgresql://me@db/runs",
        "sqlite+aiosqlite:///x.db",
    ],
)
def test_other_urls_are_left_to_sqlalchemy(url: str) -> None:
    assert plain_sqlite_file(url) is None
