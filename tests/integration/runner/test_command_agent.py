"""The command agent through `benchyard run`: protocol files, multi-turn, timeouts, crashes, capped output."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchyard.store.store import Store
from tests.support import UNSANDBOXED, Cli, scenario, write_benchmark

PROTOCOL_AGENT = """
import json, os, sys
messages = json.load(open(os.environ["BENCHYARD_MESSAGES_FILE"]))
turn = os.environ["BENCHYARD_TURN"]
instruction = open(os.environ["BENCHYARD_INSTRUCTION_FILE"]).read()
with open(os.environ["BENCHYARD_TRAJECTORY_FILE"], "a") as log:
    log.write(json.dumps({"kind": "message", "role": "assistant", "content": "thinking",
                          "tokens_in": 10, "tokens_out": 3, "cost_usd": 0.5}) + "\\n")
    log.write("this line is not json\\n")
answer = f"turn {turn}: {instruction} after {len(messages)} messages; files {sorted(os.listdir('.'))}"
if instruction == "use the output file":
    open(os.environ["BENCHYARD_OUTPUT_FILE"], "w").write("from the file")
print(answer)
"""


def _agent(tmp_path: Path, source: str, name: str = "agent.py") -> str:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return f"{sys.executable} {path}"


def test_protocol_files_turns_fixtures_and_trajectory(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(
        tmp_path / "bench",
        [
            {
                "id": "conv",
                "stimulus": {"turns": ["first", "second"], "system": "be brief"},
                "fixtures": {"files": ["data/notes.txt", {"dest": "inline.txt", "content": "x"}]},
                "checks": [
                    {"type": "contains", "value": "turn 1: first after 2 messages", "turn": 1},
                    {"type": "contains", "value": "turn 2: second after 4 messages"},
                    {"type": "contains", "value": "'inline.txt', 'notes.txt'"},
                ],
            },
            {
                "id": "file",
                "stimulus": "use the output file",
                "checks": [{"type": "equals", "value": "from the file"}],
            },
        ],
        files={"scenarios/data/notes.txt": "notes"},
    )
    result = cli("run", str(bench), "--agent-cmd", _agent(tmp_path, PROTOCOL_AGENT), "-q")
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    attempts = {a.scenario_id: a for a in store.attempts(run.id, with_evidence=True)}
    assert attempts["conv"].verdict == "passed", attempts["conv"].cause
    assert attempts["file"].verdict == "passed", attempts["file"].cause
    conv = attempts["conv"]
    assert conv.turns == 2
    assert (conv.tokens_in, conv.tokens_out, conv.cost_usd) == (20, 6, 1.0)
    kinds = [(e.kind, e.role) for e in conv.trajectory or []]
    assert kinds.count(("message", "user")) == 2
    errors = [e.content for e in conv.trajectory or [] if e.kind == "error"]
    assert errors and all("unreadable trajectory line" in e for e in errors)


def test_timeout_kills_a_process_tree_whose_child_ignores_sigterm(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    pid_file = tmp_path / "pids"
    source = f"""
import subprocess, sys, time
stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
kids = [subprocess.Popen([sys.executable, "-c", stubborn]),
        subprocess.Popen([sys.executable, "-c", stubborn], start_new_session=True)]
open({str(pid_file)!r}, "w").write(" ".join(str(k.pid) for k in kids))
time.sleep(120)
"""
    # Only the hanging scenario has the short limit: the quick one must pass on a loaded machine.
    hang = scenario("hang", "x", limits={"timeout_sec": 1.5})
    bench = write_benchmark(tmp_path / "bench", [hang, scenario("quick", "ok")])
    quick_or_hang = _agent(tmp_path, source)
    command = f'if [ "$BENCHYARD_SCENARIO_ID" = quick ]; then echo ok; else {quick_or_hang}; fi'
    result = cli("run", str(bench), "--agent-cmd", command, "-q", *UNSANDBOXED)
    assert result.exit_code == 0, result.output
    attempts = {a.scenario_id: a for a in store.attempts(store.resolve_run("latest").id)}
    assert attempts["hang"].verdict == "timeout"
    assert "timed out after 1.5s" in (attempts["hang"].cause or "")
    assert attempts["quick"].verdict == "passed"
    assert attempts["hang"].duration_sec >= 1.5  # how soon after is bench/'s to measure
    for pid in pid_file.read_text().split():
        assert not _alive(int(pid)), f"process {pid} survived the timeout"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_crash_is_a_counted_failure_with_its_cause(tmp_path: Path, cli: Cli, store: Store) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    result = cli("run", str(bench), "--agent-cmd", "echo boom >&2; exit 3", "-q")
    assert result.exit_code == 0
    [attempt] = store.attempts(store.resolve_run("latest").id)
    assert attempt.verdict == "failed"
    assert attempt.failure_kind == "agent_crash"
    assert attempt.cause == "agent exited with code 3: boom"


def test_a_missing_command_is_a_counted_failure_after_its_retries(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    # exit 127 is the agent's own exit status: a claim benchyard cannot tell from a real fault
    # (`exec` hides the missing program from the preflight, which refuses a bare one: exit 2)
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    command = "exec no-such-agent-binary-xyz"
    ran = cli(
        "run", str(bench), "--agent-cmd", command, "--retries", "1", "--retry-backoff", "0.01", "-q"
    )
    assert ran.exit_code == 3  # no attempt started (docs/exit-codes.md)
    tries = store.attempts(store.resolve_run("latest").id, include_superseded=True)
    assert [t.verdict for t in sorted(tries, key=lambda t: t.try_number)] == ["error", "failed"]
    final = max(tries, key=lambda t: t.try_number)
    assert final.failure_kind == "agent_start"
    assert "could not run (exit 127)" in (final.cause or "")
    assert "claimed by the agent's exit status" in (final.cause or "")


def test_stdout_is_capped_and_the_cap_noted(tmp_path: Path, cli: Cli, store: Store) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("big", "x")])
    flood = _agent(tmp_path, "import sys\nsys.stdout.write('y' * 3_000_000)\n")
    cli("run", str(bench), "--agent-cmd", flood, "-q")
    [attempt] = store.attempts(store.resolve_run("latest").id)
    assert len(attempt.stdout or "") == 1024 * 1024
    assert attempt.stdout_dropped_bytes == 3_000_000 - 1024 * 1024
    assert attempt.verdict == "failed"


def test_agent_environment_comes_from_benchyard_yaml(
    tmp_path: Path, cli: Cli, store: Store, monkeypatch
) -> None:
    """`env` values and `pass_env` host variables reach the agent; nothing else of the host's."""
    monkeypatch.setenv("NAME_FROM_HOST", "-bob")  # short: not scrubbed as a secret
    monkeypatch.setenv("NOT_PASSED", "-leaked")
    (cli.cwd / "benchyard.yaml").write_text(
        "agents:\n  greeter:\n    kind: command\n"
        "    command: echo $GREETING$NAME_FROM_HOST$NOT_PASSED\n"
        "    env: {GREETING: hello}\n    pass_env: [NAME_FROM_HOST]\n"
    )
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "hello-bob")])
    result = cli("run", str(bench), "--agent", "greeter", "-q")
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    assert run.agent_name == "greeter"
    assert run.agent_config["env"] == {"GREETING": "hello"}
    assert run.agent_config["pass_env"] == ["NAME_FROM_HOST"]  # the name only
    attempts = store.attempts(run.id, with_evidence=True)
    assert [(a.verdict, a.answer) for a in attempts] == [("passed", "hello-bob\n")]


def test_unknown_agent_is_one_clear_line(tmp_path: Path, cli: Cli) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    result = cli("run", str(bench), "--agent", "nobody")
    assert result.exit_code == 2
    assert "error: no agent named 'nobody' (declared: oracle)" in result.output
    assert "Traceback" not in result.output


def test_workdirs_are_removed(tmp_path: Path, cli: Cli) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    record = tmp_path / "where"
    cli("run", str(bench), "--agent-cmd", f"pwd > {record}; echo x", "-q", *UNSANDBOXED)
    workdir = Path(record.read_text().strip())
    assert workdir.parent.name == "work"
    assert not workdir.exists()


def test_self_reported_turns_past_max_turns_are_a_review_flag_not_a_failure(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    """Turns are the model calls the agent reports (never its tool calls or logs); past max_turns
    they flag the attempt for review, and its answer is still graded."""
    chatty = _agent(
        tmp_path,
        """
import json, os
with open(os.environ["BENCHYARD_TRAJECTORY_FILE"], "a") as log:
    for n in range(5):
        log.write(json.dumps({"kind": "message", "role": "assistant", "content": f"step {n}"}) + "\\n")
        log.write(json.dumps({"kind": "tool_call", "role": "assistant", "content": "ls"}) + "\\n")
print("x")
""",
    )
    bench = write_benchmark(
        tmp_path / "bench", [scenario("a", "x", limits={"max_turns": 3}), scenario("b", "x")]
    )
    cli("run", str(bench), "--agent-cmd", chatty, "-q")
    attempts = {a.scenario_id: a for a in store.attempts(store.resolve_run("latest").id)}
    assert (attempts["a"].verdict, attempts["a"].failure_kind) == ("passed", None)
    assert attempts["a"].hit_max_turns and attempts["a"].turns == 5
    assert attempts["b"].verdict == "passed" and not attempts["b"].hit_max_turns
    assert attempts["b"].turns == 5
    markdown = cli("report", "latest", "--format", "md").output
    assert "unknown" in markdown and "$0.0000" not in markdown  # no price, no claimed cost
    review = cli("report", "latest", "--format", "json")
    flags = json.loads(review.output)["flags"]
    assert [(f["scenario_id"], f["detail"]) for f in flags if f["kind"] == "hit_max_turns"] == [
        ("a", "wanted another turn after 5 turns")
    ]


RICH_AGENT = """
import json, os
steps = [
    {"kind": "message", "role": "assistant", "content": "reading", "ts": "2026-01-02T03:04:05Z",
     "latency_sec": 1.5, "ttft_sec": 0.25, "model": "priced-model", "tokens_in": 1000000,
     "tokens_out": 500000, "cost_usd": 99.0},
    {"kind": "tool_call", "content": "read_file", "tool": "read_file",
     "arguments": {"path": "a.txt"}, "call_id": "c1"},
    {"kind": "tool_result", "content": "hello", "call_id": "c1"},
    {"kind": "message", "role": "assistant", "content": "unpriced", "model": "other",
     "tokens_in": 10, "tokens_out": 1, "ttft_sec": -1},
    {"step_id": 3, "source": "agent", "message": "done", "model_name": "priced-model",
     "timestamp": "2026-01-02T03:04:09Z", "metrics": {"prompt_tokens": 2000000, "completion_tokens": 0},
     "tool_calls": [{"tool_call_id": "c2", "function_name": "grep", "arguments": {"q": "x"}}],
     "observation": {"results": [{"source_call_id": "c2", "content": "x found"}]}},
]
with open(os.environ["BENCHYARD_TRAJECTORY_FILE"], "a") as log:
    log.write("".join(json.dumps(step) + "\\n" for step in steps))
print("x")
"""


def test_a_rich_self_report_is_kept_and_priced(tmp_path: Path, cli: Cli, store: Store) -> None:
    agent = _agent(tmp_path, RICH_AGENT)
    (cli.cwd / "benchyard.yaml").write_text(
        "prices:\n  priced-model: {input_per_mtok: 1.0, output_per_mtok: 2.0}\n"
    )
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    result = cli("run", str(bench), "--agent-cmd", agent, "-q")
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    assert run.agent_config["prices"] == {
        "priced-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}
    }
    (attempt,) = store.attempts(run.id, with_evidence=True)
    claimed = [e for e in attempt.trajectory if (e.data or {}).get("source") == "agent"]
    first, call, answer, unpriced, step, observed = claimed[:6]
    assert first.ts == 1767323045.0 and (first.latency_sec, first.ttft_sec) == (1.5, 0.25)
    assert first.cost_usd == 2.0  # 1M in at $1 + 0.5M out at $2, not the claimed $99
    assert first.data is not None and first.data["claimed_cost_usd"] == 99.0
    assert call.data == {
        "source": "agent",
        "tool": "read_file",
        "agent_call_id": "c1",
        "arguments": {"path": "a.txt"},
    }
    assert answer.kind == "tool_result" and answer.content == "hello"
    assert unpriced.cost_usd is None and unpriced.ttft_sec is None  # no price; -1 s dropped
    assert step.cost_usd == 2.0 and step.ts == 1767323049.0
    assert step.data is not None and step.data["tool_calls"] == [
        {"id": "c2", "name": "grep", "arguments": '{"q": "x"}'}
    ]
    assert (observed.kind, observed.content) == ("tool_result", "x found")
    notes = [e.content for e in attempt.trajectory if e.kind == "error"]
    assert notes == ["trajectory line 4: ttft_sec -1 dropped: not seconds from 0 to 86,400"]
    assert attempt.turns == 3  # three model calls: the tool call and its result are not turns
    assert attempt.cost_usd == 4.0
    shown = cli("show", "latest", "a").output
    assert "cost $4.0000" in shown
    assert "unpriced" in shown and "[10/1 tok, cost unknown]" in shown
