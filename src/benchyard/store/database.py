"""Writing a store with SQL text that either driver runs, as store/lite.py's `Reader` reads it: a
`Database` is a Reader that also runs a function in one write transaction.

`SqliteDatabase` runs it through the standard library's `sqlite3`, for a plain SQLite file at the
head revision: the run path (the queue's claims and writes, the run's rows) never imports
SQLAlchemy there. `EngineDatabase` runs it through a SQLAlchemy engine: PostgreSQL, and a SQLite
store opened through it. Either encodes what it binds as the other stores it: a moment as SQLite's
text of it (SQLAlchemy's `DateTime` on SQLite), a dict or a list as JSON.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from benchyard.store.lite import (
    BUSY_TIMEOUT_SEC,
    EngineReader,
    Reader,
    connect_at_head,
    plain_sqlite_file,
    sqlite_pragmas,
)

if TYPE_CHECKING:
    from sqlalchemy import Connection, TextClause

T = TypeVar("T")
TRANSACTION_TRIES = 5  # a PostgreSQL transaction chosen as a deadlock victim is run again
SQLITE_MOMENT = "%Y-%m-%d %H:%M:%S.%f"  # how SQLAlchemy's DateTime keeps a moment in SQLite
_BIND_NAME = re.compile(r"(?<![:\w]):(\w+)")  # `:name`, as text() finds its parameters


@dataclass(frozen=True, slots=True)
class Done:
    """What one statement gave back: its rows (RETURNING, SELECT) and how many rows it changed."""

    rows: Sequence[Sequence[Any]]
    rowcount: int


class Transaction(Protocol):
    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> Done: ...

    def execute_many(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> None: ...


class Database(Reader, Protocol):
    def transact(self, body: Callable[[Transaction], T]) -> T:
        """Run `body` in one transaction that holds the write lock from its first statement on
        SQLite (the single-writer path); on PostgreSQL rows are locked where they are read."""
        ...


def database_errors() -> tuple[type[Exception], ...]:
    """What a store's driver raises when its database is unreachable or fails a statement:
    sqlite3's errors, and SQLAlchemy's once something imported it (a store opened without it
    raises none of them)."""
    sqlalchemy_errors = sys.modules.get("sqlalchemy.exc")
    if sqlalchemy_errors is None:
        return (sqlite3.Error,)
    return (sqlite3.Error, sqlalchemy_errors.SQLAlchemyError)


def sqlite_value(value: Any) -> Any:
    """A value as SQLite keeps it in a benchyard store."""
    if isinstance(value, datetime):
        return value.strftime(SQLITE_MOMENT)  # benchyard writes UTC only, kept naive
    if isinstance(value, dict | list):
        return json.dumps(value)
    return value


def _sqlite_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    return {name: sqlite_value(value) for name, value in (params or {}).items()}


class SqliteDatabase:
    """A Database over one `sqlite3` connection, shared by the threads of a process one statement
    or transaction at a time. `before_transaction` runs before each transaction (the check that
    the store's file is still the one opened)."""

    dialect = "sqlite"

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.connection = connection
        self.path = path
        self.before_transaction: Callable[[], None] = lambda: None
        self.lock = threading.RLock()

    @classmethod
    def open_at_head(cls, url: str) -> SqliteDatabase | None:
        """The store at `url` when it is a plain SQLite file at the head revision, else None."""
        path = plain_sqlite_file(url)
        connection = connect_at_head(url, isolation_level=None, check_same_thread=False)
        if connection is None or path is None:
            return None
        try:
            sqlite_pragmas(connection)
        except sqlite3.Error:
            connection.close()
            return None
        return cls(connection, path)

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[Sequence[Any]]:
        with self.lock:
            self.before_transaction()
            return self.connection.execute(sql, _sqlite_params(params)).fetchall()

    def stream(self, sql: str, params: Mapping[str, Any]) -> Iterator[Sequence[Any]]:
        """The rows one at a time, through a connection of its own: a big read is never held
        whole, and the shared connection stays free for other threads meanwhile."""
        self.before_transaction()
        connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_SEC)
        try:
            yield from connection.execute(sql, _sqlite_params(params))
        finally:
            connection.close()

    def transact(self, body: Callable[[Transaction], T]) -> T:
        with self.lock:
            self.before_transaction()
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                result = body(_SqliteTransaction(self.connection))
                self.connection.execute("COMMIT")
            except BaseException:
                if self.connection.in_transaction:  # SQLite may have rolled it back itself
                    self.connection.execute("ROLLBACK")
                raise
            return result

    def close(self) -> None:
        with self.lock:
            self.connection.close()


@dataclass(frozen=True, slots=True)
class _SqliteTransaction:
    connection: sqlite3.Connection

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> Done:
        cursor = self.connection.execute(sql, _sqlite_params(params))
        rows = cursor.fetchall() if cursor.description is not None else []
        return Done(rows, cursor.rowcount)

    def execute_many(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> None:
        self.connection.executemany(sql, [_sqlite_params(row) for row in rows])


class EngineDatabase(EngineReader):
    """A Database over a SQLAlchemy engine."""

    def transact(self, body: Callable[[Transaction], T]) -> T:
        return self.transact_connection(lambda connection: body(_EngineTransaction(connection)))

    def transact_connection(self, body: Callable[[Connection], T]) -> T:
        """`transact` for a body written with SQLAlchemy, given the transaction's connection."""
        from sqlalchemy.exc import OperationalError

        for attempt in range(1, TRANSACTION_TRIES + 1):
            try:
                with self.engine.connect() as connection:
                    if self.dialect == "sqlite":
                        connection.exec_driver_sql("BEGIN IMMEDIATE")
                    result = body(connection)
                    connection.commit()
                    return result
            except OperationalError as error:
                state = getattr(error.orig, "sqlstate", None) or ""
                if not state.startswith("40") or attempt == TRANSACTION_TRIES:
                    raise
        raise AssertionError("unreachable")


@dataclass(frozen=True, slots=True)
class _EngineTransaction:
    connection: Connection

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> Done:
        given = dict(params or {})
        result = self.connection.execute(_typed(sql, [given]), given)
        rows = list(result.all()) if result.returns_rows else []
        return Done(rows, result.rowcount)

    def execute_many(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> None:
        if rows:
            self.connection.execute(_typed(sql, rows), [dict(row) for row in rows])


def _typed(sql: str, rows: Sequence[Mapping[str, Any]]) -> TextClause:
    """`sql` with its moments and JSON values bound as their column types, so that SQLAlchemy
    writes them as it writes them through a table (on SQLite, as sqlite_value does)."""
    from sqlalchemy import JSON, DateTime, bindparam, text

    named = set(_BIND_NAME.findall(sql))  # a parameter the statement does not take stays untyped
    types: dict[str, Any] = {}
    for row in rows:
        for name, value in row.items():
            if name not in named:
                continue
            if isinstance(value, datetime):
                types[name] = DateTime(timezone=True)
            elif isinstance(value, dict | list):
                types[name] = JSON(none_as_null=True)
    return text(sql).bindparams(*(bindparam(name, type_=kind) for name, kind in types.items()))
