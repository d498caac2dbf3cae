"""Infrastructure faults are retried; a fault benchyard observes is never counted, one only the
agent claims (exit 75) counts against it once its retries are spent; `rerun --failed` touches only
what failed."""

from __future__ import annotations

import json
from pathlib import Path

from benchyard.store.store import Store
from tests.support import UNSANDBOXED, Cli, scenario, write_benchmark

FLAKY_ONCE = """
# Exit 75 (a transient fault) on the first try of each scenario, answer ($2) on the next.
state=$1/$BENCHYARD_SCENARIO_ID
if [ ! -e "$state" ]; then touch "$state"; echo "rate limited" >&2; exit 75; fi
echo "$2"
"""


def test_transient_fault_is_retried_and_not_counted(tmp_path: Path, cli: Cli, store: Store) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (tmp_path / "flaky.sh").write_text(FLAKY_ONCE)
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "yes"), scenario("b", "yes")])
    result = cli(
        "run",
        str(bench),
        "--agent-cmd",
        f"sh {tmp_path / 'flaky.sh'} {state} yes",
        "--retry-backoff",
        "0.01",
        "-q",
        *UNSANDBOXED,
    )
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    tries = store.attempts(run.id, include_superseded=True)
    assert [(t.scenario_id, t.try_number, t.superseded, t.verdict) for t in tries] == [
        ("a", 1, True, "error"),
        ("a", 2, False, "passed"),
        ("b", 1, True, "error"),
        ("b", 2, False, "passed"),
    ]
    assert tries[0].failure_kind == "agent_tempfail"
    assert "rate limited" in (tries[0].cause or "")
    report = json.loads(cli("report", "latest", "--format", "json").output)
    assert report["summary"]["passed"] == 2
    assert report["summary"]["failed"] == 0
    assert report["summary"]["errors"] == 0
    assert report["summary"]["retried_tries"] == 2
    assert report["summary"]["accuracy"] == 1.0


def test_a_claimed_fault_that_persists_counts_against_the_agent(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    """Exit 75 is only the agent's word: retried, then a counted failure; `rerun --failed` runs it
    again and `report --merged` counts the new verdict."""
    down = tmp_path / "down"
    down.touch()
    bench = write_benchmark(tmp_path / "bench", [scenario("down", "x"), scenario("up", "x")])
    command = f'if [ "$BENCHYARD_SCENARIO_ID" = down ] && [ -e {down} ]; then exit 75; fi; echo x'
    options = ("--retries", "2", "--retry-backoff", "0.01", "-q", *UNSANDBOXED)
    cli("run", str(bench), "--agent-cmd", command, *options)
    run = store.resolve_run("latest")
    tries = [t for t in store.attempts(run.id, include_superseded=True) if t.scenario_id == "down"]
    assert [(t.try_number, t.superseded, t.verdict) for t in tries] == [
        (1, True, "error"),
        (2, True, "error"),
        (3, False, "failed"),
    ]
    assert all(t.failure_kind == "agent_tempfail" for t in tries)
    assert "counted as failed after 3 tries" in (tries[-1].cause or "")
    summary = json.loads(cli("report", "latest", "--format", "json").output)["summary"]
    assert (summary["passed"], summary["failed"], summary["errors"], summary["counted"]) == (
        1,
        1,
        0,
        2,
    )
    assert (summary["accuracy"], summary["claimed_faults"], summary["retried_tries"]) == (0.5, 1, 2)

    down.unlink()
    assert cli("rerun", run.id[:8], "--failed", "-q", *UNSANDBOXED).exit_code == 0
    rerun = store.resolve_run("latest")
    assert [(a.scenario_id, a.verdict) for a in store.attempts(rerun.id)] == [("down", "passed")]
    merged = json.loads(cli("report", "latest", "--format", "json", "--merged").output)
    assert (merged["summary"]["passed"], merged["summary"]["accuracy"]) == (2, 1.0)


def test_a_fault_benchyard_observes_stays_an_error_outside_accuracy(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    """Not the agent's fault, seen by benchyard itself (here: the oracle asked for a reference the
    scenario lacks): an error, left out of accuracy and shown beside it. (Retried observed faults:
    tests/integration/providers/test_retries.py, tests/integration/coding/test_agents.py.)"""
    no_reference = scenario("no-reference", "x")
    del no_reference["reference"]
    bench = write_benchmark(tmp_path / "bench", [no_reference, scenario("up", "x")])
    cli("run", str(bench), "--agent", "oracle", "-q")
    run = store.resolve_run("latest")
    [missing] = [a for a in store.attempts(run.id) if a.scenario_id == "no-reference"]
    assert (missing.verdict, missing.failure_kind) == ("error", "missing_reference")
    assert "claimed" not in (missing.cause or "")
    summary = json.loads(cli("report", "latest", "--format", "json").output)["summary"]
    assert (summary["passed"], summary["errors"], summary["counted"], summary["accuracy"]) == (
        1,
        1,
        1,
        1.0,
    )
    assert (summary["accuracy_if_errors_failed"], summary["claimed_faults"]) == (0.5, 0)


ANSWERS_FROM_FILE = """
import json, os, sys
answers = json.load(open(sys.argv[1]))
answer = answers.get(os.environ["BENCHYARD_SCENARIO_ID"], "")
if answer == "CRASH":
    sys.exit(1)
print(answer)
"""


def test_rerun_failed_touches_only_failed_attempts(tmp_path: Path, cli: Cli, store: Store) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"a": "a", "b": "b", "c": "wrong", "d": "CRASH"}))
    (tmp_path / "agent.py").write_text(ANSWERS_FROM_FILE)
    bench = write_benchmark(tmp_path / "bench", [scenario(s, s) for s in "abcd"])
    command = f"python3 {tmp_path / 'agent.py'} {answers}"
    cli("run", str(bench), "--agent-cmd", command, "-q", *UNSANDBOXED)
    first = store.resolve_run("latest")
    assert sorted((a.scenario_id, a.verdict) for a in store.attempts(first.id)) == [
        ("a", "passed"),
        ("b", "passed"),
        ("c", "failed"),
        ("d", "failed"),
    ]

    answers.write_text(json.dumps({"a": "CRASH", "b": "CRASH", "c": "c", "d": "d"}))
    result = cli("rerun", first.id[:6], "--failed", "-q", *UNSANDBOXED)
    assert result.exit_code == 0, result.output
    second = store.resolve_run("latest")
    assert second.parent_run_id == first.id
    assert sorted((a.scenario_id, a.verdict) for a in store.attempts(second.id)) == [
        ("c", "passed"),
        ("d", "passed"),
    ]

    alone = json.loads(cli("report", "latest", "--format", "json").output)
    assert alone["summary"]["task_count"] == 2
    merged = json.loads(cli("report", "latest", "--format", "json", "--merged").output)
    assert merged["summary"]["passed"] == 4
    assert merged["summary"]["accuracy"] == 1.0
    assert merged["run"]["merged_runs"] == [first.id, second.id]

    nothing_left = cli("rerun", "latest", "--failed")
    assert nothing_left.exit_code == 2
    assert "has no failed, errored or timed-out attempt" in nothing_left.output
