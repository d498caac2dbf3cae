"""The store API: every reader and writer of runs and attempts goes through `Store`."""

from __future__ import annotations

import itertools
import threading
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchyard.runner import trajectory as trajectory_codec
from benchyard.store import outputs as outputs_codec
from benchyard.store import run_list, run_reads
from benchyard.store.database import Database, EngineDatabase, SqliteDatabase, Transaction
from benchyard.store.lite import OpenedFile, Reader, StoreUnavailable, in_list, json_value
from benchyard.store.records import AttemptRecord, CheckRecord, RunRecord
from benchyard.store.run_list import RUN_COLUMNS, moment, run_from_values
from benchyard.store.run_reads import RunNotFound as RunNotFound

if TYPE_CHECKING:
    from sqlalchemy import Engine, Row

_EVIDENCE_COLUMNS = ("trajectory", "patch", "outputs")  # compressed blobs
_NOT_COLUMNS = ("checks", "trajectory", "patch")  # AttemptRecord's fields kept elsewhere
# The attempts table's columns but the compressed blobs (test_store.py holds them to the schema).
ATTEMPT_COLUMNS = tuple(f.name for f in fields(AttemptRecord) if f.name not in _NOT_COLUMNS)
_STORED_IN_OUTPUTS = ("stdout", "stderr", "answer")  # NULL in new rows: in the `outputs` blob
_OUTPUT_COLUMNS = ("answer", "answers", "stdout", "stderr")
_FIGURE_COLUMNS = tuple(name for name in ATTEMPT_COLUMNS if name not in _OUTPUT_COLUMNS)
# A check result's row: its attempt, then CheckRecord's fields in their order.
CHECK_COLUMNS = ("attempt_id", *(f.name for f in fields(CheckRecord)))
STREAM_CHUNK = 500  # attempts read at once by `stream_attempts`
# The attempts' and check results' columns that a driver may hand back as text (SQLite's moments
# and JSON) or as integers (SQLite's booleans); test_database.py holds them to the schema.
ATTEMPT_MOMENTS = ("started_at", "finished_at")
ATTEMPT_FLAGS = ("superseded", "negative", "hit_max_turns")
ATTEMPT_JSON = ("answers",)
_CHECK_PASSED = CHECK_COLUMNS.index("passed") - 1  # by position in a check's values
_CHECK_DETAILS = CHECK_COLUMNS.index("details") - 1
_ATTEMPT_ORDER = "ORDER BY scenario_id, epoch, try_number"
_CHECKS_OF_RUN = (
    f"SELECT {', '.join('c.' + name for name in CHECK_COLUMNS)} FROM check_results c"
    " JOIN attempts a ON a.id = c.attempt_id WHERE a.run_id = :run"
    " ORDER BY c.attempt_id, c.position"
)


class Store:
    """A store opened either through `sqlite3` (`sqlite`: a plain SQLite file at the head
    revision, whose `engine` is made only when a reader still written with SQLAlchemy asks for
    it, as after `open` created or migrated one) or through a SQLAlchemy engine (PostgreSQL, a
    SQLite URL that is not a plain file)."""

    def __init__(
        self, url: str, *, engine: Engine | None = None, sqlite: SqliteDatabase | None = None
    ) -> None:
        self.url = url
        self._engine = engine
        self._sqlite = sqlite
        self._engine_database: EngineDatabase | None = None
        self._making = threading.Lock()
        path = sqlite.path if sqlite is not None else _engine_file(engine)
        self.opened = None if path is None else OpenedFile.of(path)
        if engine is not None:
            self._watch(engine)

    @classmethod
    def open(cls, url: str) -> Store:
        at_head = cls._open_sqlite(url)
        if at_head is not None:
            return at_head
        store = cls._open_engine(url)
        if store.opened is None:
            return store
        # A SQLite store just created or migrated is at the head revision now: through sqlite3
        # from here on, as at its next opening (a run's writes through SQLAlchemy cost a third
        # more CPU, and memory that grows with its attempts: docs/harness-cost.md).
        migrated = cls._open_sqlite(url)
        if migrated is None:
            return store
        store.close()
        return migrated

    @classmethod
    def _open_sqlite(cls, url: str) -> Store | None:
        """The store through sqlite3 when it is a plain SQLite file at the head revision."""
        sqlite = SqliteDatabase.open_at_head(url)
        if sqlite is None:
            return None
        store = cls(url, sqlite=sqlite)
        sqlite.before_transaction = store.check_still_there
        return store

    @classmethod
    def _open_engine(cls, url: str) -> Store:
        from sqlalchemy.exc import SQLAlchemyError

        from benchyard.store.engine import ensure_schema, make_engine, shown_url

        engine = make_engine(url)
        try:
            ensure_schema(engine)
            return cls(url, engine=engine)
        except (SQLAlchemyError, OSError) as error:
            engine.dispose()
            reason = getattr(error, "orig", None) or error
            one_line = " ".join(str(reason).split())
            raise StoreUnavailable(f"cannot open the store {shown_url(url)}: {one_line}") from None
        except BaseException:
            engine.dispose()
            raise

    @property
    def engine(self) -> Engine:
        """The store's SQLAlchemy engine, made on first use for a store opened through sqlite3."""
        with self._making:
            if self._engine is None:
                from benchyard.store.engine import make_engine

                self._engine = make_engine(self.url)
                self._watch(self._engine)
            return self._engine

    @property
    def database(self) -> Database:
        """The store as a Database of the statements written once as SQL text."""
        if self._sqlite is not None:
            return self._sqlite
        if self._engine_database is None:
            self._engine_database = EngineDatabase(self.engine)
        return self._engine_database

    def _watch(self, engine: Engine) -> None:
        if self.opened is not None:
            from sqlalchemy import event

            # Every new connection and every transaction first checks that the file is still
            # the one opened (SQLite would quietly start an empty one in its place).
            event.listen(engine, "do_connect", lambda *_: self.check_still_there())
            event.listen(engine, "begin", lambda _connection: self.check_still_there())

    def check_still_there(self) -> None:
        """Raise StoreGone when the SQLite file opened was removed or replaced since (a store
        directory deleted mid-run): its writes would go to a file nobody can read again."""
        if self.opened is not None:
            self.opened.check()

    def close(self) -> None:
        if self._sqlite is not None:
            self._sqlite.close()
        if self._engine is not None:
            self._engine.dispose()

    # ---- runs -------------------------------------------------------------------------

    def create_run(self, run: RunRecord) -> None:
        self.database.transact(lambda tx: insert_run(tx, run))

    def finish_run(self, run_id: str, status: str) -> None:
        self.database.transact(
            lambda tx: tx.execute(
                "UPDATE runs SET status = :status, finished_at = :finished WHERE id = :run",
                {"run": run_id, "status": status, "finished": datetime.now(UTC)},
            )
        )

    def get_run(self, run_id: str) -> RunRecord:
        sql = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs WHERE id = :run"
        rows = self.database.rows(sql, {"run": run_id})
        if not rows:
            raise RunNotFound(f"no run '{run_id}'")
        return run_from_values(rows[0])

    @property
    def reader(self) -> Database:
        """This store as a Reader of the queries written once as SQL text (run_list.py)."""
        return self.database

    def list_runs(self, limit: int | None = None, benchmark: str | None = None) -> list[RunRecord]:
        return run_list.list_runs(self.reader, limit, benchmark)

    def resolve_run(self, reference: str) -> RunRecord:
        """A run id, a unique id prefix, `latest` or `latest~N`."""
        return run_reads.resolve_run(self.reader, reference)

    def count_runs(self) -> int:
        return int(self.database.rows("SELECT count(*) FROM runs", {})[0][0])

    # ---- attempts ---------------------------------------------------------------------

    def record_attempts(self, records: Sequence[AttemptRecord]) -> None:
        """Write finished tries in one transaction; earlier tries of the same attempt are kept."""
        if records:
            self.database.transact(lambda tx: insert_attempts(tx, records))

    def attempts(
        self,
        run_id: str,
        *,
        include_superseded: bool = False,
        with_evidence: bool = False,
        scenario_id: str | None = None,
        limit: int | None = None,
    ) -> list[AttemptRecord]:
        """Attempts of a run (the first `limit` of them, when given); `with_evidence` also loads
        each trajectory and patch (large)."""
        columns = [*ATTEMPT_COLUMNS, "outputs", *(("trajectory", "patch") if with_evidence else ())]
        sql = f"SELECT {', '.join(columns)} FROM attempts WHERE run_id = :run"
        params: dict[str, Any] = {"run": run_id, "superseded": False}
        if not include_superseded:
            sql += " AND superseded = :superseded"
        if scenario_id is not None:
            sql += " AND scenario_id = :scenario"
            params["scenario"] = scenario_id
        sql += f" {_ATTEMPT_ORDER}"
        if limit is not None:
            sql += " LIMIT :limit"
            params["limit"] = limit
        rows = self.database.rows(sql, params)
        if limit is None and scenario_id is None:
            checks = _grouped_checks(self.database.rows(_CHECKS_OF_RUN, {"run": run_id}))
        else:
            checks = checks_of(self.database, [row[0] for row in rows])
        return [
            attempt_from_row(row, checks.get(row[0], []), with_evidence, columns) for row in rows
        ]

    def count_attempts(self, run_id: str, *, include_superseded: bool = False) -> int:
        sql = "SELECT count(*) FROM attempts WHERE run_id = :run"
        if not include_superseded:
            sql += " AND superseded = :superseded"
        return int(self.database.rows(sql, {"run": run_id, "superseded": False})[0][0])

    def stream_attempts(self, run_id: str) -> Iterator[AttemptRecord]:
        """The final attempts of a run with their checks, ordered by scenario and epoch, read
        STREAM_CHUNK at a time and without their outputs (answer, answers, stdout, stderr),
        trajectory or patch: what a run's figures need, in memory that does not grow with it."""
        sql = (
            f"SELECT {', '.join(_FIGURE_COLUMNS)} FROM attempts"
            f" WHERE run_id = :run AND superseded = :superseded {_ATTEMPT_ORDER}"
        )
        rows = self.database.stream(sql, {"run": run_id, "superseded": False})
        held: AttemptRecord | None = None  # the latest try of an attempt wins, as in reports
        for chunk in iter(lambda: list(itertools.islice(rows, STREAM_CHUNK)), []):
            checks = checks_of(self.database, [row[0] for row in chunk])
            for row in chunk:
                record = attempt_from_row(row, checks.get(row[0], []), names=_FIGURE_COLUMNS)
                if held is not None and _key(held) != _key(record):
                    yield held
                held = record
        if held is not None:
            yield held

    def verdict_counts(self, run_ids: list[str]) -> dict[str, dict[str, int]]:
        """Final attempts per verdict for each run, in one query."""
        return run_list.verdict_counts(self.reader, run_ids)

    def final_verdict_kinds(self, run_id: str) -> dict[tuple[str | None, str | None], int]:
        """The run's final attempts counted by verdict and failure kind, in one query."""
        sql = (
            "SELECT verdict, failure_kind, count(*) FROM attempts"
            " WHERE run_id = :run AND superseded = :superseded GROUP BY verdict, failure_kind"
        )
        rows = self.reader.rows(sql, {"run": run_id, "superseded": False})
        return {(verdict, kind): int(count) for verdict, kind, count in rows}

    def count_superseded(self, run_id: str) -> int:
        sql = "SELECT count(*) FROM attempts WHERE run_id = :run AND superseded = :superseded"
        return int(self.database.rows(sql, {"run": run_id, "superseded": True})[0][0])

    def run_chain(self, run: RunRecord) -> list[RunRecord]:
        """The run and its ancestors through `rerun`, oldest first."""
        chain = [run]
        while chain[0].parent_run_id:
            chain.insert(0, self.get_run(chain[0].parent_run_id))
        return chain


def _key(record: AttemptRecord) -> tuple[str, int]:
    return record.scenario_id, record.epoch


def checks_of(reader: Reader, attempt_ids: Sequence[str]) -> dict[str, list[CheckRecord]]:
    """The check results of these attempts, by attempt."""
    if not attempt_ids:
        return {}
    params: dict[str, Any] = {}
    sql = (
        f"SELECT {', '.join(CHECK_COLUMNS)} FROM check_results"
        f" WHERE attempt_id IN ({in_list('attempt', attempt_ids, params)})"
        " ORDER BY attempt_id, position"
    )
    return _grouped_checks(reader.rows(sql, params))


def _grouped_checks(rows: Iterable[Sequence[Any]]) -> dict[str, list[CheckRecord]]:
    """Check results by attempt, from rows of CHECK_COLUMNS as either driver hands them back
    (read by position: a row's `_asdict` took most of a big report's time)."""
    grouped: dict[str, list[CheckRecord]] = {}
    for row in rows:
        values: list[Any] = list(row[1:])
        values[_CHECK_PASSED] = bool(values[_CHECK_PASSED])
        values[_CHECK_DETAILS] = json_value(values[_CHECK_DETAILS])
        grouped.setdefault(row[0], []).append(CheckRecord(*values))
    return grouped


def insert_values(table: str, columns: Sequence[str]) -> str:
    """`INSERT INTO table (a, b) VALUES (:a, :b)`."""
    names = ", ".join(columns)
    return f"INSERT INTO {table} ({names}) VALUES ({', '.join(':' + c for c in columns)})"


_INSERT_ATTEMPT = insert_values("attempts", (*ATTEMPT_COLUMNS, *_EVIDENCE_COLUMNS))
_INSERT_CHECK = insert_values("check_results", CHECK_COLUMNS)


def insert_run(tx: Transaction, run: RunRecord) -> None:
    values = asdict(run)
    tx.execute(insert_values("runs", tuple(values)), values)


def insert_attempts(tx: Transaction, records: Sequence[AttemptRecord]) -> None:
    """Insert tries and their check results within the caller's transaction."""
    if not records:
        return
    tx.execute_many(_INSERT_ATTEMPT, [_attempt_row(record) for record in records])
    check_rows = [
        {"attempt_id": record.id, **{k: without_nul(v) for k, v in vars(check).items()}}
        for record in records
        for check in record.checks
    ]
    if check_rows:
        tx.execute_many(_INSERT_CHECK, check_rows)


def _attempt_row(record: AttemptRecord) -> dict[str, Any]:
    """A try's row: each output stored once (store/outputs.py), the trajectory referring to it."""
    row = {
        name: None if name in _STORED_IN_OUTPUTS else without_nul(getattr(record, name))
        for name in ATTEMPT_COLUMNS
    }
    row["outputs"] = outputs_codec.encode(
        outputs_codec.Outputs(record.stdout, record.stderr, record.answer)
    )
    sources = (record.stdout, record.answer)
    row["trajectory"] = trajectory_codec.encode(record.trajectory or [], sources)
    row["patch"] = outputs_codec.compress(record.patch.encode()) if record.patch else None
    return row


def without_nul(value: Any) -> Any:
    """Text an agent produced may hold NUL bytes, which PostgreSQL text cannot: U+FFFD instead."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, list):
        return [without_nul(item) for item in value]
    return value


def attempt_from_row(
    row: Any,
    checks: Iterable[CheckRecord],
    with_evidence: bool = False,
    names: Sequence[str] | None = None,
) -> AttemptRecord:
    """A try from its row (whose column `names`, when given, save reading them again for each
    row); `with_evidence` also decodes its trajectory and patch. Its outputs come from the
    `outputs` blob when the row has one (rows written before it, from the text columns)."""
    values = dict(zip(names or row._fields, row, strict=True))
    blob = _bytes(values.pop("trajectory", None))
    patch = _bytes(values.pop("patch", None))
    stored = _bytes(values.pop("outputs", None))
    if stored is not None:
        outputs = outputs_codec.decode(stored)
        values.update(stdout=outputs.stdout, stderr=outputs.stderr, answer=outputs.answer)
    for key in ATTEMPT_MOMENTS:
        values[key] = moment(values[key])
    for key in ATTEMPT_FLAGS:
        values[key] = bool(values[key])
    for key in ATTEMPT_JSON:
        if key in values:  # not among the figures' columns (stream_attempts)
            values[key] = json_value(values[key])
    record = AttemptRecord(**values, checks=list(checks))
    if with_evidence:
        sources = (record.stdout, record.answer)
        record.trajectory = trajectory_codec.decode(blob, sources)
        record.patch = zlib.decompress(patch).decode() if patch else None
    return record


def _bytes(value: bytes | memoryview | None) -> bytes | None:
    """A blob as bytes, however the driver hands it back."""
    return bytes(value) if isinstance(value, memoryview) else value


def run_from_row(row: Row[Any]) -> RunRecord:
    values = {name: value for name, value in row._asdict().items() if name in RUN_COLUMNS}
    values["started_at"] = moment(values["started_at"])
    values["finished_at"] = moment(values["finished_at"])
    return RunRecord(**values)


def _engine_file(engine: Engine | None) -> Path | None:
    """The SQLite file an engine opens, if any."""
    if engine is None:
        return None
    from benchyard.store.engine import sqlite_file

    return sqlite_file(engine.url)
