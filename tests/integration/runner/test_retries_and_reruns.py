"""Infrastructure faults are retried and never counted; `rerun --failed` touches only what failed."""

from __future__ import annotations

import json
from pathlib import Path

from benchyard.store.store import Store
from tests.support import UNSANDBOXED, Cli, scenario, write_benchmark

FLAKY_ONCE = """
# Exit 75 (a transient fault) on the first try of each scenario, answer on the next.
state=$STATE_DIR/$BENCHYARD_SCENARIO_ID
if [ ! -e "$state" ]; then touch "$state"; echo "rate limited" >&2; exit 75; fi
echo "$ANSWER"
"""


def test_transient_fault_is_retried_and_not_counted(
    tmp_path: Path, cli: Cli, store: Store, monkeypatch
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setenv("STATE_DIR", str(state))
    monkeypatch.setenv("ANSWER", "yes")
    (tmp_path / "flaky.sh").write_text(FLAKY_ONCE)
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "yes"), scenario("b", "yes")])
    result = cli(
        "run",
        str(bench),
        "--agent-cmd",
        f"sh {tmp_path / 'flaky.sh'}",
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


def test_a_fault_that_persists_is_an_error_outside_accuracy(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("down", "x"), scenario("up", "x")])
    command = 'if [ "$BENCHYARD_SCENARIO_ID" = down ]; then exit 75; fi; echo x'
    cli(
        "run", str(bench), "--agent-cmd", command, "--retries", "2", "--retry-backoff", "0.01", "-q"
    )
    run = store.resolve_run("latest")
    down = [t for t in store.attempts(run.id, include_superseded=True) if t.scenario_id == "down"]
    assert [(t.try_number, t.superseded, t.verdict) for t in down] == [
        (1, True, "error"),
        (2, True, "error"),
        (3, False, "error"),
    ]
    summary = json.loads(cli("report", "latest", "--format", "json").output)["summary"]
    assert (summary["passed"], summary["failed"], summary["errors"], summary["counted"]) == (
        1,
        0,
        1,
        1,
    )
    assert summary["accuracy"] == 1.0


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
    cli("run", str(bench), "--agent-cmd", command, "-q")
    first = store.resolve_run("latest")
    assert sorted((a.scenario_id, a.verdict) for a in store.attempts(first.id)) == [
        ("a", "passed"),
        ("b", "passed"),
        ("c", "failed"),
        ("d", "failed"),
    ]

    answers.write_text(json.dumps({"a": "CRASH", "b": "CRASH", "c": "c", "d": "d"}))
    result = cli("rerun", first.id[:6], "--failed", "-q")
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
