"""Opening a database: URL resolution, SQLite pragmas, and bringing the schema up to date."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import URL, Connection, Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from benchyard.store.lite import DEFAULT_DB_DIR as DEFAULT_DB_DIR
from benchyard.store.lite import DEFAULT_DB_FILE as DEFAULT_DB_FILE
from benchyard.store.lite import MIGRATIONS, head_revisions, sqlite_pragmas
from benchyard.store.lite import StoreGone as StoreGone
from benchyard.store.lite import StoreUnavailable as StoreUnavailable
from benchyard.store.lite import default_db_url as default_db_url
from benchyard.store.lite import head_revision as head_revision
from benchyard.store.lite import resolve_db_url as resolve_db_url
from benchyard.store.lite import shown_url as shown_url
from benchyard.store.lite import with_driver as with_driver

SUPPORTED = "sqlite (sqlite:///path/to/store.db) and postgresql (postgresql://user@host/database)"
_DRIVERS = frozenset({"sqlite", "sqlite+pysqlite", "postgresql+psycopg"})
MIGRATION_LOCK_KEY = 0x62656E6368796172  # "benchyar": PostgreSQL's advisory lock of migrations


def store_url(url: str) -> URL:
    """The parsed URL of a store benchyard can use (SQLite, or PostgreSQL through psycopg 3)."""
    try:
        parsed = make_url(with_driver(url))
    except (ArgumentError, ValueError):
        raise StoreUnavailable(
            f"'{shown_url(url)}' is not a database URL; benchyard supports {SUPPORTED}"
        ) from None
    if parsed.drivername not in _DRIVERS:
        raise StoreUnavailable(
            f"unsupported store '{shown_url(url)}': benchyard supports {SUPPORTED}"
        )
    return parsed


def sqlite_file(url: URL) -> Path | None:
    """The file of a SQLite URL (absolute), or None for an in-memory or URI-style database."""
    if url.get_backend_name() != "sqlite" or url.query.get("uri"):
        return None
    if not url.database or url.database == ":memory:":
        return None
    return Path(url.database).absolute()


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    sqlite_pragmas(connection)


def make_engine(url: str) -> Engine:
    """An engine for a supported store URL; a SQLite file's directory is created if missing."""
    parsed = store_url(url)
    if parsed.get_backend_name() == "sqlite":
        path = sqlite_file(parsed)
        if path is not None:
            _make_directory(path.parent, url)
        engine = create_engine(parsed)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(parsed, pool_pre_ping=True)


def _make_directory(directory: Path, url: str) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        in_the_way = [path for path in (directory, *directory.parents) if path.is_file()]
        if in_the_way:
            why = f"{in_the_way[-1]} is not a directory"
        else:
            why = f"{error.strerror or error}: {error.filename or directory}"
        raise StoreUnavailable(
            f"cannot open the store {shown_url(url)}: cannot create its directory ({why})"
        ) from None


def _current_revisions(engine: Engine) -> frozenset[str]:
    """The revisions the database is at; empty for a new one (or one that cannot be read)."""
    try:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
    except SQLAlchemyError:
        return frozenset()
    return frozenset(str(row[0]) for row in rows)


def _revisions_in(connection: Connection) -> frozenset[str]:
    """The revisions the database is at, read inside the caller's transaction (without a failing
    statement, which would end a PostgreSQL transaction)."""
    if not inspect(connection).has_table("alembic_version"):
        return frozenset()
    rows = connection.execute(text("SELECT version_num FROM alembic_version")).all()
    return frozenset(str(row[0]) for row in rows)


def ensure_schema(engine: Engine) -> None:
    """Run the Alembic migrations unless the database is already at the head revision.

    Processes opening a new store at once take turns: each holds a lock (a file next to a SQLite
    store, an advisory lock in PostgreSQL) and reads the revision again before migrating. Alembic
    is imported only when a migration is due: it costs a quarter second at start-up.
    """
    heads = head_revisions()
    if _current_revisions(engine) == heads:
        return
    with _migration_lock(engine), engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY}
            )
        if _revisions_in(connection) != heads:
            _upgrade(connection)


@contextlib.contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    """An exclusive lock on `<store file>.lock` for a SQLite file; nothing for other stores."""
    path = sqlite_file(engine.url)
    if path is None or not _may_be_sqlite(path):
        yield  # opening it fails with SQLite's own words; no lock file next to someone's file
        return
    try:
        handle = open(f"{path}.lock", "a+b")  # noqa: SIM115 - held across the yield
    except OSError as error:
        raise StoreUnavailable(
            f"cannot open the store {path}: cannot create its lock file ({error.strerror})"
        ) from None
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _may_be_sqlite(path: Path) -> bool:
    """Whether `path` is missing, empty or starts like a SQLite database."""
    try:
        with path.open("rb") as file:
            start = file.read(16)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return start in (b"", b"SQLite format 3\x00")


def _upgrade(connection: Connection) -> None:
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    command.upgrade(config, "heads")
