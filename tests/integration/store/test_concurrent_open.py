"""Several processes opening a new store at once (a CI matrix, `benchyard worker`s started together)
take turns at creating its tables: each one starts, finds the schema up to date, and goes on. Before,
about 5 in 12 failed with "table runs already exists"; and under load one in a hundred still failed
with "database is locked", switching the new file's journal to WAL while another process wrote it."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from benchyard.store.engine import head_revisions
from benchyard.store.store import Store
from tests.conftest import TEST_DB, private_schema

PROCESSES = 8
ROUNDS = 6
OPEN_LIMIT_SEC = 300  # only a hang (a lock never released) reaches it
HOLD_SEC = 1.0

pytestmark = pytest.mark.store_half  # a new store of the suite's kind, without `db_url`


@pytest.fixture
def fresh_url(tmp_path: Path) -> Iterator[Callable[[], str]]:
    """A factory of URLs of new, empty stores of the test database's kind."""
    if TEST_DB == "sqlite":
        yield lambda: f"sqlite:///{tmp_path / uuid.uuid4().hex / 'store.db'}"
        return
    with contextlib.ExitStack() as schemas:
        yield lambda: schemas.enter_context(private_schema(TEST_DB))


@pytest.mark.parametrize("round_number", range(ROUNDS))
def test_processes_opening_a_new_store_at_once_all_succeed(
    fresh_url: Callable[[], str], tmp_path: Path, round_number: int
) -> None:
    url = fresh_url()
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "benchyard", "runs", "--db", url],
            cwd=tmp_path,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(PROCESSES)
    ]
    results = [process.communicate(timeout=OPEN_LIMIT_SEC) for process in processes]
    failures = [
        err for process, (_, err) in zip(processes, results, strict=True) if process.returncode
    ]
    assert failures == []
    assert all(out.startswith("no runs yet") for out, _ in results)
    store = Store.open(url)
    with store.engine.connect() as connection:
        versions = connection.execute(text("SELECT version_num FROM alembic_version")).all()
    store.close()
    assert sorted(row[0] for row in versions) == sorted(head_revisions())  # every head, once


def test_a_store_opens_while_another_connection_writes_it_before_it_is_in_wal_mode(
    tmp_path: Path,
) -> None:
    """SQLite fails `PRAGMA journal_mode=WAL` at once, without its busy timeout, while another
    connection holds a write lock on a file still in rollback mode: Store.open waits it out."""
    path = tmp_path / "store.db"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE holding (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO holding VALUES (1)")
    release = threading.Timer(HOLD_SEC, lambda: writer.execute("COMMIT"))
    release.start()
    try:
        store = Store.open(f"sqlite:///{path}")
    finally:
        release.join()
        writer.close()
    store.close()
    reader = sqlite3.connect(path)
    assert reader.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    versions = reader.execute("SELECT version_num FROM alembic_version").fetchall()
    reader.close()
    assert sorted(row[0] for row in versions) == sorted(head_revisions())
