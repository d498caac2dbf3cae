"""Shared fixtures: a store per test (SQLite, or a private PostgreSQL schema when BENCHYARD_TEST_DB is a
PostgreSQL URL), benchmarks written to disk, and the CLI invoked in-process or as a real process."""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchyard.store.store import Store
from tests.support import Cli


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C reaches the commands the tests start even when the suite itself was started in the
    background by a non-interactive shell, which ignores SIGINT for it: an ignored signal stays
    ignored in every child, and a command that ignores SIGINT cannot be tested for it."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


TEST_DB = os.environ.get("BENCHYARD_TEST_DB", "sqlite")
POSTGRES_URL = os.environ.get("BENCHYARD_POSTGRES_URL", "postgresql://root@127.0.0.1:5432/test")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Against PostgreSQL, only the tests whose store is the suite's: those that take `db_url` (or a
    fixture built on it) or are marked `store_half`, less those marked `store_in_passing` (they
    record a run and read it back as other tests of the half do; their subject is something else).
    The others run the same code whatever the store, and have already run in the SQLite half of
    `make test`; pytest counts them deselected."""
    if TEST_DB == "sqlite":
        return
    kept: list[pytest.Item] = []
    same: list[pytest.Item] = []
    for item in items:
        (kept if depends_on_the_store(item) else same).append(item)
    if same:
        config.hook.pytest_deselected(items=same)
        items[:] = kept


def depends_on_the_store(item: pytest.Item) -> bool:
    """The closer of the two marks decides (a test's own over its module's), else `db_url`."""
    for marker in item.iter_markers():
        if marker.name in ("store_half", "store_in_passing"):
            return marker.name == "store_half"
    return "db_url" in getattr(item, "fixturenames", ())


@pytest.fixture(autouse=True)
def reports_follow_the_shipped_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every report a test renders as JSON (`report --format json`, the web API, a test's own
    `model_dump(mode="json")`) is validated against src/benchyard/report/report.schema.json."""
    import jsonschema

    from benchyard.report.model import RunReport
    from benchyard.report.schema import generated_schema, shipped_schema, validate_report

    dump = RunReport.model_dump

    def validated(self: RunReport, *args: Any, **kwargs: Any) -> dict[str, Any]:
        payload = dump(self, *args, **kwargs)
        if kwargs.get("mode") == "json" and not kwargs.get("include") and not kwargs.get("exclude"):
            try:
                validate_report(payload)
            except jsonschema.ValidationError:
                if shipped_schema() != generated_schema():
                    pytest.fail(
                        "src/benchyard/report/report.schema.json is out of date with "
                        "report/model.py: run `.venv/bin/python -m benchyard.report.output_schemas`"
                    )
                raise
        return payload

    monkeypatch.setattr(RunReport, "model_dump", validated)


@pytest.fixture
def db_url(tmp_path: Path) -> Iterator[str]:
    if TEST_DB == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
        return
    with private_schema(TEST_DB) as url:
        yield url


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A private schema on the PostgreSQL server, whichever store the suite runs against (for
    tests about a server store in particular)."""
    server = TEST_DB if TEST_DB != "sqlite" else POSTGRES_URL
    with private_schema(server) as url:
        yield url


@contextlib.contextmanager
def private_schema(server: str) -> Iterator[str]:
    """A fresh schema on the PostgreSQL server at `server`, dropped afterwards: its URL."""
    from sqlalchemy import create_engine, text

    from benchyard.store.engine import with_driver

    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(with_driver(server))
    with admin.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    separator = "&" if "?" in server else "?"
    try:
        yield f"{server}{separator}options=-csearch_path%3D{schema}"
    finally:
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


@pytest.fixture
def storeless_cli(tmp_path: Path) -> Cli:
    """The CLI for commands that touch no store (`verify`): without `db_url`, a test that takes
    it runs once, in the SQLite half of `make test`."""
    work = tmp_path / "work"
    work.mkdir()
    return Cli(None, work)
