"""Fixtures of the web tests: a filled store and a server on loopback serving it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchyard.store.store import Store
from tests.integration.web.support import Filled, ServerThread, fill_store, served


@pytest.fixture
def filled(store: Store, tmp_path: Path) -> Filled:
    return fill_store(store, tmp_path / "project" / "webbench")


@pytest.fixture
def server(store: Store, filled: Filled, tmp_path: Path) -> Iterator[ServerThread]:
    with served(store, tmp_path / "project") as running:
        yield running
