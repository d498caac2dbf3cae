"""`benchyard gc`: the evidence of the runs chosen goes, what they were graded on stays."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from benchyard.runner.trajectory import message
from benchyard.store.gc import GcPolicy, collect
from benchyard.store.records import CheckRecord
from benchyard.store.store import Store
from tests.support import Cli, attempt_record, run_record

NOW = datetime.now(UTC)


def _run(store: Store, run_id: str, days_ago: float, status: str = "finished") -> None:
    store.create_run(run_record(run_id, status=status, started_at=NOW - timedelta(days=days_ago)))
    check = CheckRecord(0, "equals", "equals", False, 0.0, 1.0, "expected 4")
    output = f"the answer of {run_id} is " + "five " * 100
    store.record_attempts(
        [
            attempt_record(
                run_id,
                f"{run_id}-a",
                "s1",
                verdict="failed",
                score=0.0,
                cause="expected 4",
                stdout=output,
                stderr="a warning\n",
                answer=output.rstrip(),
                trajectory=[message("assistant", output.rstrip())],
                patch="--- a\n+++ b\n",
                checks=[check],
            )
        ]
    )


def _evidence(store: Store, run_id: str) -> tuple[object, ...]:
    shown = store.attempts(run_id, with_evidence=True)[0]
    return shown.stdout, shown.stderr, shown.trajectory, shown.patch


@pytest.fixture
def three_runs(store: Store) -> Store:
    _run(store, "old", days_ago=40)
    _run(store, "mid", days_ago=10)
    _run(store, "new", days_ago=1)
    return store


def test_gc_drops_the_outputs_of_old_runs_and_keeps_their_verdicts(three_runs: Store) -> None:
    store = three_runs
    outcome = collect(store, GcPolicy(older_than_days=30))

    assert outcome.runs == ["old"] and outcome.attempts == 1 and outcome.stored_bytes > 0
    assert _evidence(store, "old") == (None, None, [], None)
    kept = store.attempts("old")[0]
    assert (kept.verdict, kept.score, kept.cause) == ("failed", 0.0, "expected 4")
    assert kept.answer == "the answer of old is " + "five " * 99 + "five"
    assert [(c.check_type, c.passed, c.reason) for c in kept.checks] == [
        ("equals", False, "expected 4")
    ]
    for untouched in ("mid", "new"):
        assert _evidence(store, untouched)[0] is not None
    assert collect(store, GcPolicy(older_than_days=30)).attempts == 0  # nothing left to drop


def test_keep_last_and_older_than_together_collect_runs_that_are_both(three_runs: Store) -> None:
    assert collect(three_runs, GcPolicy(keep_last=1), dry_run=True).runs == ["mid", "old"]
    both = collect(three_runs, GcPolicy(older_than_days=5, keep_last=2), dry_run=True)
    assert both.runs == ["old"]


def test_a_dry_run_drops_nothing(three_runs: Store) -> None:
    outcome = collect(three_runs, GcPolicy(keep_last=0), dry_run=True)

    assert outcome.attempts == 3 and not outcome.vacuumed
    assert all(_evidence(three_runs, run)[0] is not None for run in ("old", "mid", "new"))


def test_running_runs_are_never_collected(store: Store) -> None:
    _run(store, "busy", days_ago=90, status="running")

    assert collect(store, GcPolicy(older_than_days=1)).runs == []
    assert _evidence(store, "busy")[0] is not None


def test_the_gc_command_says_what_it_dropped(store: Store, cli: Cli) -> None:
    _run(store, "old", days_ago=40)

    dry = cli("gc", "--older-than", "30", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "would drop the outputs, trajectories and patches of 1 try in 1 run" in dry.output
    assert "runs: old\n" in dry.output  # which runs, by id
    assert _evidence(store, "old")[0] is not None

    done = cli("gc", "--older-than", "30")
    assert done.exit_code == 0, done.output
    assert "dropped the outputs, trajectories and patches of 1 try in 1 run" in done.output
    assert _evidence(store, "old")[0] is None
    assert cli("gc").exit_code == 2
