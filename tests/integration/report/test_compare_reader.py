"""`compare` reads a SQLite store at the head revision through the standard library's sqlite3
(issue 27, items 1 and 3): two runs of one benchmark are merged as they are read, without
SQLAlchemy; a rerun to merge with the run it re-ran is still read through the Store."""

from __future__ import annotations

import json
from pathlib import Path

from benchyard.store.store import Store
from tests.integration.runner.test_imports import imported_by
from tests.unit.report.records import Row, write_run

DATABASE_DRIVERS = ("sqlalchemy", "alembic")


def _store(tmp_path: Path) -> str:
    """A SQLite store at the head revision with a baseline (aaaa...), a candidate (bbbb...) that
    fails `two`, and a rerun of the candidate (cccc...) that passes it."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = Store.open(url)
    write_run(store, "a" * 16, [Row("one", "passed"), Row("two", "passed")], minutes=0)
    write_run(store, "b" * 16, [Row("one", "passed"), Row("two", "failed")], minutes=1)
    write_run(store, "c" * 16, [Row("two", "passed")], minutes=2, parent_run_id="b" * 16)
    store.close()
    return url


def test_compare_reads_a_sqlite_store_without_sqlalchemy(tmp_path: Path) -> None:
    url = _store(tmp_path)
    out = tmp_path / "compare.json"

    for args in (["aaaa", "bbbb"], ["aaaa", "bbbb", "--all"], ["aaaa", "bbbb", "--format", "json"]):
        modules = imported_by(["compare", *args, "--db", url, "-o", str(out)], tmp_path)

        assert "benchyard.store.compare_rows" in modules
        assert sorted(m for m in modules if m.split(".")[0] in DATABASE_DRIVERS) == []
    candidate = json.loads(out.read_text(encoding="utf-8"))["candidates"][0]
    assert (candidate["paired"], candidate["pass_to_fail"]) == (2, 1)


def test_compare_of_a_rerun_merges_it_through_the_store(tmp_path: Path) -> None:
    url = _store(tmp_path)
    out = tmp_path / "compare.json"

    modules = imported_by(
        ["compare", "aaaa", "cccc", "--format", "json", "--db", url, "-o", str(out)], tmp_path
    )

    assert "benchyard.store.store" in modules  # the merge reads the Store
    candidate = json.loads(out.read_text(encoding="utf-8"))["candidates"][0]
    assert candidate["run"]["merged_runs"] == ["b" * 16, "c" * 16]
    assert (candidate["paired"], candidate["pass_to_fail"], candidate["both_passed"]) == (2, 0, 2)
