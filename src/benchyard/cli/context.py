"""What most commands need: the project config and an open store."""

from __future__ import annotations

from benchyard.config import ProjectConfig, find_config, load_config
from benchyard.store.engine import resolve_db_url
from benchyard.store.store import Store


def load_project() -> ProjectConfig:
    return load_config(find_config())


def open_store(db: str | None, config: ProjectConfig) -> Store:
    return Store.open(resolve_db_url(db, config.db))
