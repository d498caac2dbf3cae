"""Garbage collection held while a run starts (benchyard/startup.py): released only where it was
held, and then with what start-up built frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from benchyard.startup import hold_collection, release_collection


@pytest.fixture
def collection_restored() -> Iterator[None]:
    yield
    gc.unfreeze()
    gc.enable()


@pytest.mark.usefixtures("collection_restored")
def test_held_collection_resumes_with_start_ups_objects_frozen() -> None:
    hold_collection()
    assert not gc.isenabled()

    release_collection()

    assert gc.isenabled()
    assert gc.get_freeze_count() > 0


@pytest.mark.usefixtures("collection_restored")
def test_a_release_without_a_hold_changes_nothing() -> None:
    """A process that never held collection (a test, the web server) keeps its own settings."""
    frozen = gc.get_freeze_count()
    gc.disable()

    release_collection()

    assert not gc.isenabled()
    assert gc.get_freeze_count() == frozen
