"""The PostgreSQL half of `make test` runs the tests whose store is the suite's, and deselects the
rest (they ran the same code in the SQLite half): those that take no store, and those that take it
only in passing (`store_in_passing`), unless a test's own `store_half` mark keeps it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORE_TEST = "tests/e2e/test_cli_errors.py::test_show_refuses_an_unknown_scenario"
MARKED_TEST = "tests/integration/store/test_concurrent_open.py"
PLAIN_TEST = "tests/unit/spec/test_broken_corpus.py::test_every_case_directory_has_expectations"
PLAUSIBILITY = "tests/integration/speed/test_plausibility.py"
IN_PASSING_TEST = f"{PLAUSIBILITY}::test_an_honest_endpoint_trips_no_rule"  # takes `store`
KEPT_BY_ITS_MARK = f"{PLAUSIBILITY}::test_the_server_s_own_tokenizer_checks_usage_more_tightly"
TESTS = (STORE_TEST, MARKED_TEST, PLAIN_TEST, IN_PASSING_TEST, KEPT_BY_ITS_MARK)


def collected(store: str) -> list[str]:
    """The node ids pytest collects from the tests above with BENCHYARD_TEST_DB=`store`."""
    environment = {**os.environ, "BENCHYARD_TEST_DB": store}
    environment.pop("PYTEST_ADDOPTS", None)  # a -q there would list files, not node ids
    listing = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-p", "no:cacheprovider", *TESTS],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in listing.splitlines() if "::" in line]


def test_the_postgresql_half_keeps_only_the_tests_of_its_store() -> None:
    ids = collected("postgresql://root@127.0.0.1:5432/test")
    assert STORE_TEST in ids
    assert any(node.startswith(MARKED_TEST) for node in ids)
    assert KEPT_BY_ITS_MARK in ids
    assert PLAIN_TEST not in ids
    assert IN_PASSING_TEST not in ids


def test_the_sqlite_half_keeps_every_test() -> None:
    ids = collected("sqlite")
    assert {STORE_TEST, PLAIN_TEST, IN_PASSING_TEST, KEPT_BY_ITS_MARK} <= set(ids)
    assert any(node.startswith(MARKED_TEST) for node in ids)
