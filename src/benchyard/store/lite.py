"""Reading a SQLite store with the standard library's `sqlite3`, without SQLAlchemy (whose import
with its SQLite dialect costs a quarter second, more than the rest of a command that only reads),
and what opening a store needs before SQLAlchemy: the store's URL and the schema's head revisions.

A read query is written once, as SQL text that both drivers run through a `Reader`: `SqliteReader`
here, for a plain `sqlite:///PATH` file already at the head revision; `EngineReader`, a SQLAlchemy
connection, for PostgreSQL and while `Store.open` creates or migrates a SQLite store, which it then
opens again here (`open_at_head` says which). Values come back as each driver hands them:
`run_list.py` reads both (SQLite's datetimes and JSON as text, its booleans as integers)."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from benchyard.errors import BenchyardError

if TYPE_CHECKING:
    from sqlalchemy import Engine

DEFAULT_DB_DIR = ".benchyard"
DEFAULT_DB_FILE = "benchyard.db"
BUSY_TIMEOUT_SEC = 10.0  # how long a statement waits on another connection's lock (engine.py too)
SQLITE_HEADER = b"SQLite format 3\x00"
MIGRATIONS = Path(__file__).parent / "migrations"
WAL_SWITCH_RETRY_SEC = 0.02


class StoreUnavailable(BenchyardError):
    """The database cannot be reached or brought up to date."""


class StoreGone(StoreUnavailable):
    """The SQLite file a store opened was removed or replaced while in use."""


def default_db_url(cwd: Path | None = None) -> str:
    return f"sqlite:///{(cwd or Path.cwd()) / DEFAULT_DB_DIR / DEFAULT_DB_FILE}"


def resolve_db_url(explicit: str | None, configured: str | None = None) -> str:
    """--db, then BENCHYARD_DB, then the project config, then SQLite under ./.benchyard/."""
    return explicit or os.environ.get("BENCHYARD_DB") or configured or default_db_url()


def with_driver(url: str) -> str:
    """Plain postgresql:// URLs use psycopg 3, the driver benchyard installs."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


# A URL's `scheme://user:` and the password after it, up to the `@` before the host; parsed as
# SQLAlchemy parses one (a password may hold a `/`), here without importing it.
_PASSWORD = re.compile(r"^([\w+.-]+://[^:/@]*:)[^@]*@")


def shown_url(url: str) -> str:
    """The store's URL as it may be printed: its driver named, its password hidden, even when it
    does not parse."""
    return _PASSWORD.sub(r"\1***@", with_driver(url), count=1)


def head_revision() -> str:
    """The newest migration: files are named `NNNN_<what>.py` with revision id `NNNN`, in order."""
    return max(p.name.split("_", 1)[0] for p in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))


_DOWN_REVISION = re.compile(r"^down_revision\s*=\s*[\"']([^\"']+)[\"']", re.MULTILINE)


def head_revisions() -> frozenset[str]:
    """The revisions no other migration follows: one once the chain is linear; several while
    migrations written side by side still branch from one revision (until they are re-chained)."""
    revisions, followed = set(), set()
    for path in (MIGRATIONS / "versions").glob("[0-9]*_*.py"):
        revisions.add(path.name.split("_", 1)[0])
        followed.update(_DOWN_REVISION.findall(path.read_text(encoding="utf-8")))
    return frozenset(revisions - followed)


class Reader(Protocol):
    """Runs one read query, SQL text with `:name` parameters, and returns its rows (`rows`), or
    yields them one at a time (`stream`: a report's failures, never all held). `dialect` is
    SQLAlchemy's name of the database: `sqlite` or `postgresql`."""

    dialect: str

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[Sequence[Any]]: ...

    def stream(self, sql: str, params: Mapping[str, Any]) -> Iterator[Sequence[Any]]: ...


@runtime_checkable
class HoldsReader(Protocol):
    """What has a Reader: a Store (its engine's)."""

    @property
    def reader(self) -> Reader: ...


def reader_of(source: Reader | HoldsReader) -> Reader:
    """The Reader given, or the one of the Store given (callers that hold a Store)."""
    return source.reader if isinstance(source, HoldsReader) else source


def code_point_order(column: str, reader: Reader) -> str:
    """`column` ordered by code point, as Python orders strings: SQLite's default (BINARY) does,
    PostgreSQL's database collation may not."""
    return f'{column} COLLATE "C"' if reader.dialect == "postgresql" else column


def json_value(value: Any) -> Any:
    """A JSON column's value as either driver hands it back (SQLite's as text, psycopg's
    decoded)."""
    return json.loads(value) if isinstance(value, str) else value


def in_list(name: str, values: Iterable[Any], params: dict[str, Any]) -> str:
    """`:name_0, :name_1, ...` for an `IN (...)` of `values`, each added to `params`."""
    names = []
    for index, value in enumerate(values):
        params[f"{name}_{index}"] = value
        names.append(f":{name}_{index}")
    return ", ".join(names)


class SqliteReader:
    """A Reader over one sqlite3 connection to a store at the head revision."""

    dialect = "sqlite"

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[Sequence[Any]]:
        return self.connection.execute(sql, dict(params)).fetchall()

    def stream(self, sql: str, params: Mapping[str, Any]) -> Iterator[Sequence[Any]]:
        yield from self.connection.execute(sql, dict(params))

    def close(self) -> None:
        self.connection.close()


STREAMED_ROWS = 500  # rows fetched at once by EngineReader.stream


class EngineReader:
    """A Reader over a SQLAlchemy engine (PostgreSQL, or SQLite opened by Store.open)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[Sequence[Any]]:
        from sqlalchemy import text

        with self.engine.connect() as connection:
            return list(connection.execute(text(sql), dict(params)).all())

    def stream(self, sql: str, params: Mapping[str, Any]) -> Iterator[Sequence[Any]]:
        """The rows STREAMED_ROWS at a time (PostgreSQL's through a server-side cursor), never
        the whole result held at once."""
        from sqlalchemy import text

        with self.engine.connect() as connection:
            streaming = connection.execution_options(yield_per=STREAMED_ROWS)
            yield from streaming.execute(text(sql), dict(params))


_PLAIN_PREFIXES = ("sqlite:///", "sqlite+pysqlite:///")


def plain_sqlite_file(url: str) -> Path | None:
    """The file of a plain `sqlite:///PATH` URL (absolute), as store/engine.py's `sqlite_file`
    reads it; None for any other URL (PostgreSQL, in-memory, a query string, %-escapes), which
    is left to SQLAlchemy."""
    for prefix in _PLAIN_PREFIXES:
        if url.startswith(prefix):
            path = url[len(prefix) :]
            if not path or path == ":memory:" or any(mark in path for mark in "?#%"):
                return None
            return Path(path).absolute()
    return None


def open_at_head(url: str) -> SqliteReader | None:
    """A reader of the store at `url` when it is a plain SQLite file that exists and is at the
    head revision; None otherwise: Store.open then creates or migrates it, or says what is wrong
    with it, in its own words."""
    connection = connect_at_head(url)
    return None if connection is None else SqliteReader(connection)


def connect_at_head(url: str, **options: Any) -> sqlite3.Connection | None:
    """A `sqlite3` connection (made with `options`) to the store at `url` when it is a plain
    SQLite file that exists and is at the head revision, else None (see open_at_head)."""
    path = plain_sqlite_file(url)
    if path is None or not _starts_like_sqlite(path):
        return None
    try:
        connection: sqlite3.Connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SEC, **options)
    except sqlite3.Error:
        return None
    try:
        rows = connection.execute("SELECT version_num FROM alembic_version").fetchall()
    except sqlite3.Error:
        rows = []
    if not rows or frozenset(str(row[0]) for row in rows) != head_revisions():
        connection.close()
        return None
    return connection


def _starts_like_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def sqlite_pragmas(connection: Any) -> None:
    """What every connection to a SQLite store sets first (a `sqlite3` connection)."""
    cursor = connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout={round(BUSY_TIMEOUT_SEC * 1000)}")
    _switch_to_wal(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _switch_to_wal(cursor: Any) -> None:
    """`PRAGMA journal_mode=WAL`, tried again while the database is busy: while another connection
    writes a store not yet in WAL mode (processes creating a new store at once), SQLite fails the
    switch at once, without waiting on the busy timeout as its other statements do."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SEC
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode != sqlite3.SQLITE_BUSY or time.monotonic() > deadline:
                raise
        time.sleep(WAL_SWITCH_RETRY_SEC)


@dataclass(frozen=True)
class OpenedFile:
    """The SQLite file a store opened, by device and inode: a file removed, or another put in
    its place, is noticed before the next write goes to a file nobody will read again."""

    path: Path
    device: int
    inode: int

    @classmethod
    def of(cls, path: Path) -> OpenedFile:
        stat = path.stat()
        return cls(path, stat.st_dev, stat.st_ino)

    def check(self) -> None:
        """Raise StoreGone when the path no longer leads to the file that was opened."""
        try:
            stat = self.path.stat()
        except OSError:
            stat = None
        if stat is None or (stat.st_dev, stat.st_ino) != (self.device, self.inode):
            raise StoreGone(
                f"the store file {self.path} was removed or replaced during the run: "
                "the results written to it since it was opened are lost"
            )
