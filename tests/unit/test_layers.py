"""Imports point down the layers drawn in docs/architecture.md (scripts/layers.py reads both).

KNOWN_UPWARD and KNOWN_MODULE_CIRCLES are the imports and circles still waiting to be untangled:
they may only shrink. A test fails when a new one appears, and when a listed one is gone (delete
it from the list then).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "layers.py"


def load_layers() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchyard_layers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


layers = load_layers()

# (importer, imported): imports pointing up the table, each to be turned around.
KNOWN_UPWARD: set[tuple[str, str]] = set()

# Circles between modules that remain once KNOWN_UPWARD is set aside.
KNOWN_MODULE_CIRCLES: set[frozenset[str]] = set()


@pytest.fixture(scope="module")
def floors() -> list[list[str]]:
    return layers.read_floors()


@pytest.fixture(scope="module")
def imports() -> list[Any]:
    return layers.all_imports()


def arrows(found: list[Any]) -> set[tuple[str, str]]:
    return {(each.importer, each.imported) for each in found}


def test_the_table_has_floors_of_rooms(floors: list[list[str]]) -> None:
    assert len(floors) > 5
    rooms = [room for floor in floors for room in floor]
    assert "runner/" in rooms and "checks/" in rooms
    assert len(rooms) == len(set(rooms)), "a room is on one floor"


def test_every_module_is_in_a_room(floors: list[list[str]], imports: list[Any]) -> None:
    assert layers.analyse(floors, imports).unplaced == []


def test_no_import_points_up(floors: list[list[str]], imports: list[Any]) -> None:
    upward = layers.analyse(floors, imports).upward
    new = [str(each) for each in upward if (each.importer, each.imported) not in KNOWN_UPWARD]
    assert new == [], "imports pointing up docs/architecture.md's layers"
    gone = KNOWN_UPWARD - arrows(upward)
    assert gone == set(), "no longer pointing up: delete them from KNOWN_UPWARD"


def test_no_circle_between_rooms(floors: list[list[str]], imports: list[Any]) -> None:
    rest = layers.without(imports, KNOWN_UPWARD)
    assert layers.analyse(floors, rest).room_circles == []


def test_no_new_circle_between_modules(floors: list[list[str]], imports: list[Any]) -> None:
    rest = layers.without(imports, KNOWN_UPWARD)
    circles = {frozenset(each) for each in layers.analyse(floors, rest).module_circles}
    assert circles - KNOWN_MODULE_CIRCLES == set(), "new circles between modules"
    assert KNOWN_MODULE_CIRCLES - circles == set(), "gone: delete them from KNOWN_MODULE_CIRCLES"


def test_an_upward_import_and_a_circle_are_found(tmp_path: Path) -> None:
    table = tmp_path / "architecture.md"
    table.write_text(
        f"{layers.TABLE_START}\n| floor | rooms | what |\n| --- | --- | --- |\n"
        "| 0 | `low/` | below |\n| 1 | `high/` | above |\n"
        f"{layers.TABLE_END}\n"
    )
    found = [
        layers.Import("benchyard.high.a", "benchyard.low.b", 1),
        layers.Import("benchyard.low.b", "benchyard.high.a", 2),
    ]
    floors = layers.read_floors(table)
    assert floors == [["low/"], ["high/"]]
    findings = layers.analyse(floors, found)
    assert [str(each) for each in findings.upward] == [
        "benchyard.low.b -> benchyard.high.a (line 2)"
    ]
    assert findings.room_circles == [["high/", "low/"]]
    assert findings.module_circles == [["benchyard.high.a", "benchyard.low.b"]]
