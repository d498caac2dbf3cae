"""Opening a database: URL resolution, SQLite pragmas, and bringing the schema up to date."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import SQLAlchemyError

from benchyard.errors import BenchyardError


class StoreUnavailable(BenchyardError):
    """The database cannot be reached or brought up to date."""


DEFAULT_DB_DIR = ".benchyard"
DEFAULT_DB_FILE = "benchyard.db"


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


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str) -> Engine:
    url = with_driver(url)
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True)


MIGRATIONS = Path(__file__).parent / "migrations"


def head_revision() -> str:
    """The newest migration: files are named `NNNN_<what>.py` with revision id `NNNN`, in order."""
    return max(p.name.split("_", 1)[0] for p in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))


def _current_revision(engine: Engine) -> str | None:
    try:
        with engine.connect() as connection:
            row = connection.execute(text("SELECT version_num FROM alembic_version")).first()
    except SQLAlchemyError:
        return None
    return str(row[0]) if row else None


def ensure_schema(engine: Engine) -> None:
    """Run the Alembic migrations unless the database is already at the head revision.

    Alembic is imported only when a migration is due: it costs a quarter second at start-up.
    """
    if _current_revision(engine) == head_revision():
        return
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
