"""An agent's claims about itself: the tokens and cost a command agent reports in its trajectory.

Before: a trajectory line with `cost_usd: 1e999999` (which JSON reads as infinite) made the run's
cost `Infinity`, the JSON report invalid JSON, and `--budget` stop the run after the first
attempt. Now a number that cannot be believed is dropped with a note in the trajectory, the run
goes on, and every JSON report is strict JSON."""

from __future__ import annotations

import json
import subprocess
from typing import Any

from benchyard.agents.self_report import parse_line
from benchyard.providers.fake_server import FakeLLM
from benchyard.runner.tool_events import observed_calls
from benchyard.store.store import Store
from tests.integration.providers.conftest import write_project
from tests.support import Cli, attempt_record, run_record, write_benchmark

RUN_LIMIT_SEC = 300
CLAIMING_AGENT = """\
import os
with open(os.environ["BENCHYARD_TRAJECTORY_FILE"], "a") as log:
    log.write('{"kind": "message", "role": "assistant", "content": "thinking", '
              '"cost_usd": 1e999999, "tokens_in": -5, "tokens_out": 7}\\n')
    log.write('{"kind": "message", "role": "assistant", "content": "again", "cost_usd": 0.25}\\n')
print("ok")
"""


def _output(cli: Cli, *args: str) -> tuple[int, str, str]:
    process = cli.process(*args)
    try:
        out, err = process.communicate(timeout=RUN_LIMIT_SEC)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"benchyard {args[0]} hung for {RUN_LIMIT_SEC}s") from None
    assert "Traceback" not in err, err
    return process.returncode, out, err


def _strict(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_an_infinite_cost_claim_is_dropped_with_a_note(project_cli: Cli) -> None:
    scenarios = [
        {"id": sid, "stimulus": "say ok", "checks": [{"type": "equals", "value": "ok"}]}
        for sid in ("a", "b", "c")
    ]
    bench = write_benchmark(project_cli.cwd / "bench", scenarios)
    agent = project_cli.cwd / "agents" / "claims.py"
    agent.parent.mkdir(parents=True)
    agent.write_text(CLAIMING_AGENT, encoding="utf-8")
    code, out, err = _output(
        project_cli, "run", str(bench), "--agent-cmd", f"python3 {agent}", "-j", "1",
        "--budget", "5", "-q",
    )  # fmt: skip
    assert code == 0, out + err
    store = Store.open(project_cli.db_url)
    try:
        run = store.resolve_run("latest")
        attempts = store.attempts(run.id, with_evidence=True)
    finally:
        store.close()
    assert run.status == "finished"  # not stopped at its budget
    assert sorted((a.scenario_id, a.verdict) for a in attempts) == [
        ("a", "passed"), ("b", "passed"), ("c", "passed")
    ]  # fmt: skip
    for attempt in attempts:
        assert attempt.cost_usd == 0.25
        assert (attempt.tokens_in, attempt.tokens_out) == (0, 7)
        notes = [e.content for e in attempt.trajectory or [] if e.kind == "error"]
        assert notes == [
            "trajectory line 1: tokens_in -5 dropped: not a whole number from 0 to 100,000,000",
            "trajectory line 1: cost_usd inf dropped: not a number from 0 to 10,000",
        ]
    for command in (
        ("show", "latest", "--format", "json"),
        ("show", "latest", "a", "--format", "json"),
        ("report", "latest", "--format", "json"),
    ):
        code, out, err = _output(project_cli, *command)
        assert code == 0, err
        report = _strict(out)
    assert report["summary"]["cost_usd"] == 0.75


def test_a_report_of_a_stored_infinite_cost_is_strict_json(project_cli: Cli) -> None:
    """A run recorded before claims were checked, with an infinite cost in the store: its JSON
    report writes null there, never `Infinity`."""
    store = Store.open(project_cli.db_url)
    try:
        store.create_run(run_record("0123456789abcdef", planned_attempts=1))
        store.record_attempts(
            [attempt_record("0123456789abcdef", "a1", "s", cost_usd=float("inf"))]
        )
    finally:
        store.close()
    code, out, err = _output(project_cli, "report", "latest", "--format", "json")
    assert code == 0, err
    assert _strict(out)["summary"]["cost_usd"] is None


def test_a_provider_s_absurd_token_count_is_not_believed(project_cli: Cli) -> None:
    """A provider's usage claiming a 4,000-digit completion count: turning it into a cost
    overflowed (an error, or an infinite cost); now the count is not believed and the run goes
    on with a finite cost."""
    reply = {"content": "ok", "prompt_tokens": 12, "completion_tokens": 10**4000}
    with FakeLLM({"default": reply}) as llm:
        write_project(project_cli.cwd, llm.url)
        bench = write_benchmark(
            project_cli.cwd / "bench",
            [{"id": "q", "stimulus": "hi", "checks": [{"type": "equals", "value": "ok"}]}],
        )
        code, out, err = _output(project_cli, "run", str(bench), "--agent", "model", "-q")
    assert code == 0, out + err
    store = Store.open(project_cli.db_url)
    try:
        (attempt,) = store.attempts(store.resolve_run("latest").id)
    finally:
        store.close()
    assert attempt.verdict == "passed"
    assert attempt.tokens_in == 12 and attempt.tokens_out < 10**8
    code, out, err = _output(project_cli, "report", "latest", "--format", "json")
    assert code == 0, err
    cost = _strict(out)["summary"]["cost_usd"]
    assert cost is not None and cost < 1


def test_a_claimed_tool_call_is_never_an_observed_one() -> None:
    """A tool check counts the calls benchyard answered (a `call_id` in the event's data); an
    agent that writes one into its trajectory, id and all, is kept apart."""
    line = {"kind": "tool_call", "content": "", "tool": "pay", "call_id": "call-1"}
    (call,) = parse_line(json.dumps(line).encode(), 1, {})
    assert call.data == {"source": "agent", "tool": "pay", "agent_call_id": "call-1"}
    assert observed_calls([call]) == []
