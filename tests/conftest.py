"""Shared fixtures: a store per test (SQLite, or a private PostgreSQL schema when BENCHYARD_TEST_DB is a
PostgreSQL URL), benchmarks written to disk, and the CLI invoked in-process or as a real process."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchyard.store.store import Store
from tests.support import Cli

TEST_DB = os.environ.get("BENCHYARD_TEST_DB", "sqlite")


@pytest.fixture
def db_url(tmp_path: Path) -> Iterator[str]:
    if TEST_DB == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    from sqlalchemy import create_engine, text

    from benchyard.store.engine import with_driver

    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(with_driver(TEST_DB))
    with admin.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    separator = "&" if "?" in TEST_DB else "?"
    yield f"{TEST_DB}{separator}options=-csearch_path%3D{schema}"
    with admin.begin() as connection:
        connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    opened = Store.open(db_url)
    yield opened
    opened.close()


@pytest.fixture
def cli(db_url: str, tmp_path: Path) -> Cli:
    work = tmp_path / "work"
    work.mkdir()
    return Cli(db_url, work)
