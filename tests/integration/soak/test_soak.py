"""Soak (issue 20): 200 short runs of tool-server, coding and plain-answer scenarios in the bwrap
sandbox, at concurrencies from 1 to 16, eight runs at once, while agents and sandboxes are killed
(SIGKILL) and stopped (SIGSTOP, and left stopped) at random. Every run must end, finished, with
each planned attempt recorded once with a final verdict and its retried tries kept; the store, the
queue and the report must agree; no zombie, agent or sandbox may be left behind, nor any scratch
directory. Outcomes only: no time is asserted (a hang, no run ending for 10 minutes, fails the
test with the loop's stacks). The runs go through the library API in-process (tests/integration/soak/load.py), not
200 CLI processes; `bench/soak.py` puts the same load under a clock.

It runs in the PostgreSQL half of `make test` only: several runs at once on one store is what a
server store is for, and one half is enough for its few minutes."""

from __future__ import annotations

import os
import random
import shutil
from collections import Counter
from pathlib import Path

import pytest

from benchyard.report.build import build_report
from benchyard.store.store import Store
from tests.conftest import TEST_DB
from tests.integration.soak.load import (
    CONCURRENCIES,
    KINDS,
    Chaos,
    Outcome,
    RunSpec,
    Soak,
    leftover_processes,
    leftover_scratch,
    parents,
    random_specs,
    run_load,
    run_problems,
    short_work_root,
)

RUNS = 200
LANES = 8  # runs at once
CHAOS_EVERY_SEC = (0.15, 0.5)  # a signal about every third of a second

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        TEST_DB == "sqlite",
        reason="the soak runs in the PostgreSQL half of `make test` (BENCHYARD_TEST_DB=a "
        "PostgreSQL URL); this is the SQLite half",
    ),
]


def test_every_run_ends_with_every_attempt_recorded_while_agents_and_sandboxes_are_signalled(
    tmp_path: Path, db_url: str, store: Store
) -> None:
    if shutil.which("bwrap") is None:
        pytest.fail("bwrap is not installed: apt-get install bubblewrap (`make test` does it)")
    seed = int(os.environ.get("BENCHYARD_SOAK_SEED", random.randrange(2**32)))
    rng = random.Random(seed)
    with short_work_root() as work_root:
        soak = Soak.prepare(tmp_path, work_root, db_url)
        # One calm run first: it opens (probes) the sandbox, which every later run reuses; a probe
        # killed by the chaos would refuse a run before it is recorded, as it should.
        [warm] = run_load(soak, [RunSpec(("answer-0", "code-0", "tool-0"), 1, 3)], 1)
        assert run_problems(store, warm) == [], f"seed {seed}"
        specs = random_specs(RUNS, rng)
        known = set(parents())
        with Chaos(soak.agent_script, rng, CHAOS_EVERY_SEC) as chaos:
            outcomes = run_load(soak, specs, LANES)
        problems = [problem for outcome in outcomes for problem in run_problems(store, outcome)]
        problems += [problem for outcome in outcomes for problem in report_problems(store, outcome)]
        assert problems == [], f"seed {seed}, {chaos.counts()}:\n" + "\n".join(problems[:40])
        leftovers = leftover_processes(soak.agent_script, known)
        assert leftovers.zombies == [], f"seed {seed}: zombie children"
        assert leftovers.alive == [], f"seed {seed}: agents or sandboxes left running"
        assert leftover_scratch(work_root) == [], f"seed {seed}: scratch left in the work root"

    # The load was what it says: every kind of scenario passed somewhere (its tools were served,
    # its code graded), signals landed on agents and sandboxes, stopped agents timed out, claimed
    # faults were retried; and nothing ended in a harness error (a bug of benchyard's).
    assert {spec.concurrency for spec in specs} >= {CONCURRENCIES[0], CONCURRENCIES[-1]}
    assert set(chaos.counts()) == {
        "SIGKILL agent",
        "SIGSTOP agent",
        "SIGKILL sandbox",
        "SIGSTOP sandbox",
    }, f"seed {seed}: {chaos.counts()}"
    tries = [
        attempt
        for outcome in outcomes
        if outcome.run is not None
        for attempt in store.attempts(outcome.run.id, include_superseded=True)
    ]
    harness = [
        f"{attempt.scenario_id}: {attempt.cause}"
        for attempt in tries
        if attempt.failure_kind == "harness_error"
    ]
    assert harness == [], f"seed {seed}: harness errors:\n" + "\n".join(harness[:20])
    passed = Counter(attempt.category for attempt in tries if attempt.verdict == "passed")
    assert set(passed) == set(KINDS), f"seed {seed}: passes by kind {dict(passed)}"
    assert any(attempt.verdict == "timeout" for attempt in tries), f"seed {seed}"
    assert any(attempt.superseded for attempt in tries), f"seed {seed}: no retried try"


def report_problems(store: Store, outcome: Outcome) -> list[str]:
    """The run's report counts what the store holds: its final attempts by verdict, and the tries
    retried."""
    if outcome.run is None:
        return []
    run = store.get_run(outcome.run.id)
    summary = build_report(store, run).summary
    counts = store.verdict_counts([run.id]).get(run.id, {})
    reported = {
        "passed": summary.passed,
        "failed": summary.failed,
        "timeout": summary.timeouts,
        "error": summary.errors,
    }
    problems = []
    if {verdict: n for verdict, n in reported.items() if n} != counts:
        problems.append(f"run {run.id[:8]}: report {reported}, store {counts}")
    if summary.attempt_count != run.planned_attempts:
        problems.append(
            f"run {run.id[:8]}: report counts {summary.attempt_count} attempts of "
            f"{run.planned_attempts} planned"
        )
    if summary.retried_tries != store.count_superseded(run.id):
        problems.append(
            f"run {run.id[:8]}: report {summary.retried_tries} retried tries, store "
            f"{store.count_superseded(run.id)}"
        )
    return problems
