"""What most commands need: the project config and an open store, or a reader of it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchyard.config import ProjectConfig
    from benchyard.store.lite import Reader
    from benchyard.store.store import Store


def load_project() -> ProjectConfig:
    from benchyard.config import find_config, load_config

    return load_config(find_config())


def open_store(db: str | None, config: ProjectConfig) -> Store:
    from benchyard.store.lite import resolve_db_url
    from benchyard.store.store import Store

    return Store.open(resolve_db_url(db, config.db))


def configured_db() -> str | None:
    """The store benchyard.yaml names, the file read (and refused when invalid) as
    `load_project` reads it; None, without importing its models, when there is no such file."""
    from benchyard.config_file import find_config

    path = find_config()
    if path is None:
        return None
    from benchyard.config import load_config

    return load_config(path).db


@contextlib.contextmanager
def reading(db: str | None) -> Iterator[Reader]:
    """A reader of the store --db, BENCHYARD_DB or benchyard.yaml names: through the standard
    library's sqlite3 for a SQLite file at the head revision (without importing SQLAlchemy);
    else the store opened as `open_store` opens it (created or migrated first; PostgreSQL)."""
    from benchyard.store.lite import open_at_head, resolve_db_url

    url = resolve_db_url(db, configured_db())
    lite = open_at_head(url)
    if lite is not None:
        try:
            yield lite
        finally:
            lite.close()
        return
    from benchyard.store.store import Store

    store = Store.open(url)
    try:
        yield store.reader
    finally:
        store.close()
