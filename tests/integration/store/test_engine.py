"""Where the store lives: --db, BENCHYARD_DB, benchyard.yaml, or SQLite in WAL mode under ./.benchyard/."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import text

from benchyard.store.engine import default_db_url, resolve_db_url
from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark


def test_sqlite_store_uses_wal(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'nested' / 'store.db'}")
    with store.engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar_one() == "wal"
    store.close()


def test_url_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("BENCHYARD_DB", raising=False)
    assert resolve_db_url(None, None) == default_db_url()
    assert resolve_db_url(None, "sqlite:///configured.db") == "sqlite:///configured.db"
    monkeypatch.setenv("BENCHYARD_DB", "sqlite:///from-env.db")
    assert resolve_db_url(None, "sqlite:///configured.db") == "sqlite:///from-env.db"
    assert (
        resolve_db_url("sqlite:///explicit.db", "sqlite:///configured.db")
        == "sqlite:///explicit.db"
    )


def test_default_store_is_under_dot_benchyard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BENCHYARD_DB", raising=False)
    bench = write_benchmark(tmp_path / "b", [scenario("a", "x")])
    work = tmp_path / "project"
    work.mkdir()
    cli = Cli("unused", work)
    assert cli("run", str(bench), "--agent", "oracle", "-q", db=False).exit_code == 0
    assert (work / ".benchyard" / "benchyard.db").is_file()
    listing = cli("runs", db=False)
    assert "fixture-bench 1.0" in listing.output


def test_benchyard_db_environment_variable(
    tmp_path: Path, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHYARD_DB", db_url)
    bench = write_benchmark(tmp_path / "b", [scenario("a", "x")])
    work = tmp_path / "project"
    work.mkdir()
    assert (
        Cli("unused", work)("run", str(bench), "--agent", "oracle", "-q", db=False).exit_code == 0
    )
    assert not (work / ".benchyard").exists()
    store = Store.open(db_url)
    assert store.resolve_run("latest").benchmark_name == "fixture-bench"
    store.close()
