"""Runs of the same benchmark content are compared as they are read (report/compare.py's
`compare_read`, merging each run's final rows in (scenario, epoch) order): the comparison is the
one the whole-read path (reruns to merge, other benchmark content) makes of the same attempts, row
for row and figure for figure, with epochs, rows missing on either side, two final tries of one
attempt, and scenario ids whose code point order is not a locale's."""

from __future__ import annotations

from typing import Any

import pytest

from benchyard.report.compare import compare_runs, streamable
from benchyard.report.model import Comparison
from benchyard.store.store import Store
from tests.support import attempt_record
from tests.unit.report.records import Row, write_run

# Code point order: "B" < "_x" < "a1" < "a2" < "é"; a locale's collation puts them otherwise.
SCENARIOS = ("a1", "B", "é", "_x", "a2", "c3", "d4", "e5")
VERDICTS = ("passed", "failed", "passed", "timeout", "error", "passed", "failed", "passed")


def _rows(shift: int, missing: tuple[str, ...] = (), extra: tuple[str, ...] = ()) -> list[Row]:
    """Two epochs of each scenario, their verdicts shifted by `shift` on epoch 2 (so that runs
    differ there), less the scenarios `missing`, with the scenarios `extra`."""
    rows = []
    for n, sid in enumerate((*SCENARIOS, *extra)):
        if sid in missing:
            continue
        for epoch in (1, 2):
            verdict = VERDICTS[(n + shift * (epoch - 1)) % len(VERDICTS)]
            rows.append(
                Row(
                    sid,
                    verdict,
                    epoch=epoch,
                    category=f"c{n % 3}",
                    turns=1 + n % 4,
                    cost_usd=0.1 * n + 0.01 * epoch if n % 3 else None,
                    duration_sec=0.3 + n / 7 + epoch / 11,
                )
            )
    return rows


RUNS = {  # run id suffix: its rows
    "a": _rows(0),
    "b": _rows(1, missing=("d4",), extra=("f6",)),  # one missing, one more
    "c": _rows(3, missing=("B", "_x")),
}


@pytest.fixture
def run_ids(store: Store) -> dict[str, str]:
    """Each run by its name, and each candidate again ("b~", "c~") of other benchmark content
    (compared whole, its scenarios paired anyway)."""
    ids = {}
    for n, (name, rows) in enumerate(RUNS.items()):
        ids[name] = write_run(store, name * 16, rows, minutes=n)
        if name != "a":
            ids[f"{name}~"] = write_run(
                store, f"{name}e" * 8, rows, minutes=n + 5, benchmark_hash="sha256:01"
            )
    return ids


def _comparisons(
    store: Store, ids: dict[str, str], candidate: str, **options: Any
) -> tuple[Comparison, Comparison]:
    """The baseline against `candidate` compared as read, and against its twin compared whole."""
    found = []
    for name, read_as_merged in ((candidate, True), (f"{candidate}~", False)):
        runs = [store.get_run(ids["a"]), store.get_run(ids[name])]
        assert streamable(runs, merged=True) == read_as_merged
        found.append(
            compare_runs(store, runs, allow_version_mismatch=True, allow_partial=True, **options)
        )
    return found[0], found[1]


def _without_run_identity(comparison: Comparison) -> dict[str, Any]:
    """The comparison less what differs between the two sets of runs: their ids and content."""
    dumped = comparison.model_dump(mode="json")
    for candidate in dumped["candidates"]:
        for name in ("id", "merged_runs", "benchmark", "lineage", "started_at"):
            candidate["run"].pop(name)
        candidate.pop("scenario_versions")  # per scenario when the content is the same
    return dumped


@pytest.mark.parametrize("candidate", ["b", "c"])
@pytest.mark.parametrize("list_unchanged", [True, False])
def test_the_streamed_comparison_is_the_whole_read_one(
    store: Store, run_ids: dict[str, str], candidate: str, list_unchanged: bool
) -> None:
    streamed, whole = _comparisons(store, run_ids, candidate, list_unchanged=list_unchanged)

    assert _without_run_identity(streamed) == _without_run_identity(whole)
    found = streamed.candidates[0]
    assert found.scenario_versions == "per scenario"
    assert found.paired > 0 and found.pass_to_fail + found.fail_to_pass > 0
    assert found.accuracy_delta_ci95_method == "cluster-robust by scenario"
    assert streamed.baseline.accuracy_ci95_method == "cluster-robust by scenario"


@pytest.mark.parametrize("candidate", ["b", "c"])
def test_the_rows_that_differ_are_listed_and_the_equal_ones_counted(
    store: Store, run_ids: dict[str, str], candidate: str
) -> None:
    streamed, _ = _comparisons(store, run_ids, candidate, list_unchanged=False)

    verdicts = [
        {(row.scenario_id, row.epoch): row.verdict for row in RUNS[name]}
        for name in ("a", candidate)
    ]
    keys = set().union(*verdicts)
    differ = {key for key in keys if verdicts[0].get(key) != verdicts[1].get(key)}
    assert {(row.scenario_id, row.epoch) for row in streamed.scenarios} == differ
    assert ("a1", 1) not in differ and len(differ) > 2
    assert streamed.unchanged == len(keys) - len(differ) > 0
    for row in streamed.scenarios:
        assert row.verdicts == [found.get((row.scenario_id, row.epoch)) for found in verdicts]


def test_two_final_tries_of_one_attempt_count_once(store: Store, run_ids: dict[str, str]) -> None:
    """The database's counts would count both tries: such a run is read again, whole."""
    for run_id in (run_ids["b"], run_ids["b~"]):
        first = RUNS["b"][0]
        store.record_attempts(  # a second final try of (a1, 1), with the same verdict
            [
                attempt_record(
                    run_id,
                    f"{run_id}{'f' * 16}",
                    first.scenario_id,
                    epoch=first.epoch,
                    verdict=first.verdict,
                    category=first.category,
                    turns=first.turns,
                    cost_usd=first.cost_usd,
                    duration_sec=first.duration_sec,
                    try_number=2,
                )
            ]
        )

    streamed, whole = _comparisons(store, run_ids, "b", list_unchanged=True)

    assert _without_run_identity(streamed) == _without_run_identity(whole)
    assert streamed.candidates[0].run.attempt_count == len(RUNS["b"])
