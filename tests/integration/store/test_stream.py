"""A run's report reads its attempts a chunk at a time: the same figures whatever the chunk."""

from __future__ import annotations

import pytest

from benchyard.report.build import build_report, final_attempts
from benchyard.store import store as store_module
from benchyard.store.records import CheckRecord
from benchyard.store.store import Store
from tests.support import attempt_record, run_record


def _write(store: Store) -> None:
    store.create_run(run_record("r1"))
    records = []
    for n in range(7):
        verdict = ("passed", "failed", "error")[n % 3]
        check = CheckRecord(0, "equals", "equals", verdict == "passed", 0.0, 1.0, "r")
        for epoch in (1, 2):
            records.append(
                attempt_record(
                    "r1", f"a{n}-{epoch}", f"s{n}", epoch=epoch, verdict=verdict, checks=[check]
                )
            )
    # a second final try of one attempt: the later one wins, as across a rerun chain
    records.append(
        attempt_record("r1", "a0-2-again", "s0", epoch=2, try_number=2, verdict="failed")
    )
    store.record_attempts(records)


@pytest.mark.parametrize("chunk", [1, 2, 500])
def test_a_report_read_in_chunks_is_the_report(
    store: Store, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(store)
    whole = build_report(store, store.get_run("r1"))
    monkeypatch.setattr(store_module, "STREAM_CHUNK", chunk)

    streamed = list(store.stream_attempts("r1"))
    assert [a.id for a in streamed] == [a.id for a in final_attempts(store, [store.get_run("r1")])]
    assert all(a.stdout is None and a.answer is None for a in streamed)
    report = build_report(store, store.get_run("r1"))
    assert report.model_dump() == whole.model_dump()
    assert report.summary.attempt_count == 14 and report.summary.errors == 4
    assert report.repeated is not None and [f.kind for f in report.flags].count("flaky") == 1
