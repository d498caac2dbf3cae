"""A side that covers part of what the baseline covers is refused in one line, with the reason;
rescored and imported runs are named as such by `runs` and by `compare`."""

from __future__ import annotations

import json

import pytest

from benchyard.report.compare import CompareRefused, compare_runs
from benchyard.store.schema import runs as runs_table
from benchyard.store.store import Store
from tests.support import Cli
from tests.unit.report.records import Row, write_run

SCENARIOS = [f"s{i:02d}" for i in range(10)]


def _rows(failing: set[str], scenarios: list[str] = SCENARIOS) -> list[Row]:
    return [Row(sid, "failed" if sid in failing else "passed") for sid in scenarios]


def test_a_filtered_run_is_refused_against_a_full_baseline(cli: Cli, store: Store) -> None:
    write_run(store, "a" * 16, _rows(set()))
    filtered = {"epochs": 1, "filters": ["category=general"], "limit": None}
    write_run(store, "b" * 16, _rows({"s00"}, SCENARIOS[:2]), minutes=1, settings=filtered)
    result = cli("compare", "a" * 8, "b" * 8)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: run bbbbbbbb covers filter category=general but the baseline aaaaaaaa covers "
        "all scenarios: their accuracies are of different scenarios; compare it anyway with "
        "--allow-partial"
    ]
    assert cli("compare", "a" * 8, "b" * 8, "--allow-partial").exit_code == 0


def test_an_unfinished_run_is_refused(store: Store) -> None:
    write_run(store, "a" * 16, _rows(set()))
    write_run(store, "b" * 16, _rows({"s00"}, SCENARIOS[:2]), minutes=1, status="cancelled")
    # write_run plans what it writes: plan the whole benchmark, as a cancelled run does
    with store.engine.begin() as connection:
        connection.execute(
            runs_table.update().where(runs_table.c.id == "b" * 16).values(planned_attempts=10)
        )
    runs = [store.get_run("a" * 16), store.get_run("b" * 16)]
    with pytest.raises(CompareRefused, match="run bbbbbbbb is partial: 2 of its 10 planned"):
        compare_runs(store, runs)
    assert compare_runs(store, runs, allow_partial=True).candidates[0].paired == 2


def test_rescored_and_imported_runs_name_their_source(cli: Cli, store: Store) -> None:
    write_run(store, "a" * 16, _rows(set()))
    write_run(store, "b" * 16, _rows({"s01"}), minutes=1, rescored_from="a" * 16)
    imported = {"epochs": 1, "imported_from": {"format": "inspect", "file": "/logs/x.eval"}}
    write_run(store, "c" * 16, _rows(set()), minutes=2, settings=imported)

    listed = {e["id"][:1]: e for e in json.loads(cli("runs", "--format", "json").output)}
    assert listed["b"]["lineage"] == ["rescore of aaaaaaaa"]
    assert listed["b"]["rescored_from"] == "a" * 16
    assert listed["c"]["lineage"] == ["imported from inspect /logs/x.eval"]
    assert listed["c"]["imported_from"]["format"] == "inspect"
    table = cli("runs").output
    assert "rescore of aaaaaaaa" in table and "imported from inspect" in table

    shown = cli("compare", "a" * 8, "b" * 8, "c" * 8, "--format", "md").output
    assert "- run bbbbbbbb: rescore of aaaaaaaa" in shown
    assert "- run cccccccc: imported from inspect /logs/x.eval" in shown
