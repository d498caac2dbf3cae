"""A SQLite store at the head revision is written and read through the standard library's sqlite3
(store/database.py's SqliteDatabase), one to create or migrate through SQLAlchemy: each writes
every value as the other does, and reads back what the other wrote."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import JSON, Boolean, DateTime, Table

from benchyard.store.database import EngineDatabase, SqliteDatabase, Transaction
from benchyard.store.records import AttemptRecord, CheckRecord, RunRecord
from benchyard.store.schema import attempts, check_results
from benchyard.store.store import (
    ATTEMPT_COLUMNS,
    ATTEMPT_FLAGS,
    ATTEMPT_JSON,
    ATTEMPT_MOMENTS,
    CHECK_COLUMNS,
    Store,
    insert_run,
)

MOMENT = datetime(2026, 12, 5, 21, 14, 35, 123456, tzinfo=UTC)


def _run(run_id: str) -> RunRecord:
    return RunRecord(
        id=run_id,
        status="running",
        benchmark_name="b",
        benchmark_version="1",
        benchmark_hash="sha256:0",
        benchmark_path="/b",
        agent_name="oracle",
        agent_config={"kind": "oracle", "nested": {"list": [1, 2.5, None, "ü"]}},
        settings={"on_crash": "fail", "epochs": 2},
        benchyard_version="0",
        host="h",
        started_at=MOMENT,
        planned_attempts=1,
        agent_dirty=False,
    )


def _attempt(run_id: str) -> AttemptRecord:
    check = CheckRecord(0, "equals", "equals", True, 1.0, 1.0, "ok", 0.5, {"f1": 0.75})
    return AttemptRecord(
        id=f"{run_id}-a",
        run_id=run_id,
        scenario_id="s1",
        category="c",
        epoch=1,
        try_number=1,
        verdict="passed",
        score=1.0,
        started_at=MOMENT,
        finished_at=MOMENT,
        duration_sec=0.25,
        negative=True,
        answer="x\x00y",
        stdout="out",
        stderr="err",
        checks=[check, replace(check, position=1, details=None, threshold=None)],
        trajectory=[],
        patch="--- a\n+++ b\n",
        answers=["one", "two"],
        cost_usd=None,
    )


def _stores(tmp_path: Path) -> tuple[Store, Store]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    Store.open(url).close()  # created (and migrated) through SQLAlchemy
    lite = Store.open(url)  # at the head revision now: through sqlite3
    engine = Store._open_engine(url)
    assert isinstance(lite.database, SqliteDatabase)
    assert isinstance(engine.database, EngineDatabase)
    return lite, engine


def _raw(path: Path, table: str, key: str, value: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as connection:
        sql = f"SELECT * FROM {table} WHERE {key} = ? ORDER BY 1, 2"
        return connection.execute(sql, (value,)).fetchall()


def test_either_driver_writes_what_the_other_reads(tmp_path: Path) -> None:
    lite, engine = _stores(tmp_path)
    for writer, reader, run_id in ((lite, engine, "r1"), (engine, lite, "r2")):
        writer.create_run(_run(run_id))
        writer.record_attempts([_attempt(run_id)])
        writer.finish_run(run_id, "finished")

        run = reader.get_run(run_id)
        assert run.agent_config == _run(run_id).agent_config
        assert run.settings == _run(run_id).settings
        assert run.agent_dirty is False
        assert run.started_at == MOMENT
        assert run.status == "finished" and run.finished_at is not None
        [read] = reader.attempts(run_id, with_evidence=True)
        assert read.started_at == MOMENT and read.answer == "x\x00y"  # in the outputs blob
        assert read.answers == ["one", "two"] and read.negative is True
        assert read.superseded is False and read.hit_max_turns is False
        assert read.patch == "--- a\n+++ b\n"
        assert [check.details for check in read.checks] == [{"f1": 0.75}, None]
        assert [check.passed for check in read.checks] == [True, True]
        assert reader.count_attempts(run_id) == 1
    lite.close()
    engine.close()


def test_either_driver_stores_the_same_bytes(tmp_path: Path) -> None:
    """The same run and attempt written each way are the same rows, byte for byte (but ids):
    moments as SQLAlchemy's text, JSON as json.dumps, NULL for a missing JSON value."""
    lite, engine = _stores(tmp_path)
    for writer, run_id in ((lite, "r1"), (engine, "r2")):
        writer.create_run(replace(_run(run_id), finished_at=MOMENT))
        writer.record_attempts([_attempt(run_id)])
    path = tmp_path / "store.db"
    for table, key in (("runs", "id"), ("attempts", "run_id")):
        first, second = (_raw(path, table, key, run_id) for run_id in ("r1", "r2"))
        assert [_without_ids(row) for row in first] == [_without_ids(row) for row in second]
    first, second = (_raw(path, "check_results", "attempt_id", f"{r}-a") for r in ("r1", "r2"))
    assert [row[1:] for row in first] == [row[1:] for row in second]
    with sqlite3.connect(path) as connection:
        [(started,)] = connection.execute("SELECT started_at FROM runs WHERE id = 'r1'")
    assert started == "2026-12-05 21:14:35.123456"
    lite.close()
    engine.close()


def test_either_driver_reads_the_same_attempts(tmp_path: Path) -> None:
    """`attempts` and `stream_attempts` hand back the same records through sqlite3 as through
    SQLAlchemy: a retried try and the try that superseded it, each scenario's checks, evidence."""
    lite, engine = _stores(tmp_path)
    lite.create_run(_run("r1"))
    first = replace(_attempt("r1"), id="t1", superseded=True, verdict="error", hit_max_turns=True)
    retried = replace(_attempt("r1"), id="t2", try_number=2, answers=None)
    other = replace(_attempt("r1"), id="t3", scenario_id="s0", checks=[])
    lite.record_attempts([first, retried, other])
    readings = (
        {"include_superseded": True, "with_evidence": True},
        {},
        {"include_superseded": True, "limit": 2},
        {"include_superseded": True, "scenario_id": "s1"},
    )
    for options in readings:
        read = lite.attempts("r1", **options)  # type: ignore[arg-type]
        assert read == engine.attempts("r1", **options), options  # type: ignore[arg-type]
    assert [a.id for a in lite.attempts("r1", include_superseded=True)] == ["t3", "t1", "t2"]
    assert [a.id for a in lite.attempts("r1")] == ["t3", "t2"]
    [flagged] = lite.attempts("r1", include_superseded=True, scenario_id="s1", limit=1)
    assert flagged.superseded is True and flagged.hit_max_turns is True
    streamed = list(lite.stream_attempts("r1"))
    assert streamed == list(engine.stream_attempts("r1"))
    assert [(a.id, len(a.checks)) for a in streamed] == [("t3", 0), ("t2", 2)]
    lite.close()
    engine.close()


def _without_ids(row: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(value for value in row if value not in ("r1", "r2", "r1-a", "r2-a"))


def test_the_column_lists_are_the_schemas() -> None:
    blobs = {"trajectory", "patch", "outputs"}
    assert set(ATTEMPT_COLUMNS) == {column.name for column in attempts.columns} - blobs
    assert set(CHECK_COLUMNS) == {column.name for column in check_results.columns}
    # the columns that sqlite3 hands back as text or integers, which the readers decode
    assert set(ATTEMPT_MOMENTS) == _typed(attempts, DateTime)
    assert set(ATTEMPT_FLAGS) == _typed(attempts, Boolean)
    assert set(ATTEMPT_JSON) == _typed(attempts, JSON)
    assert _typed(check_results, Boolean) == {"passed"}
    assert _typed(check_results, JSON) == {"details"}


def _typed(table: Table, kind: type) -> set[str]:
    return {column.name for column in table.columns if isinstance(column.type, kind)}


def test_a_transaction_that_fails_writes_nothing_and_the_next_one_runs(tmp_path: Path) -> None:
    lite, engine = _stores(tmp_path)

    def halfway(tx: Transaction) -> None:
        insert_run(tx, _run("r1"))
        raise RuntimeError("stopped halfway")

    with pytest.raises(RuntimeError):
        lite.database.transact(halfway)
    lite.create_run(_run("r2"))
    with pytest.raises(sqlite3.IntegrityError):  # the same id again: the statement fails
        lite.create_run(_run("r2"))
    lite.finish_run("r2", "finished")

    assert [(run.id, run.status) for run in engine.list_runs()] == [("r2", "finished")]
    lite.close()
    engine.close()


def test_a_store_it_had_to_create_is_written_through_sqlite3_from_its_first_opening(
    tmp_path: Path,
) -> None:
    """Created (migrated) through SQLAlchemy, a SQLite file is at the head revision: the Store that
    `open` returns writes it through sqlite3 already, as at its next opening. A SQLite URL that is
    not a plain file (in memory) stays with the engine."""
    created = Store.open(f"sqlite:///{tmp_path / 'new.db'}")
    assert isinstance(created.database, SqliteDatabase)
    created.create_run(_run("r1"))
    created.record_attempts([_attempt("r1")])
    created.close()

    again = Store.open(f"sqlite:///{tmp_path / 'new.db'}")
    assert [a.scenario_id for a in again.attempts("r1")] == [_attempt("r1").scenario_id]
    again.close()

    in_memory = Store.open("sqlite://")
    assert isinstance(in_memory.database, EngineDatabase)
    in_memory.close()
