"""The model bridge with a real command agent in the default bwrap sandbox: a stdlib client that
knows only OPENAI_BASE_URL and OPENAI_API_KEY reaches benchyard's fake model server through the
bridge, over real HTTP, with no network of its own; every call is in the trajectory; the real key
never reaches the sandbox; a provider that goes down and max_turns stop the attempt live."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchyard.config import load_config
from benchyard.providers.fake_server import FakeLLM
from benchyard.status import provider_statuses
from benchyard.store.records import AttemptRecord
from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark

pytestmark = [
    pytest.mark.store_in_passing,  # the bridge; the store only records the run's calls
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]

REAL_KEY = "sk-real-provider-key-7f3a9c"
KEY_VARIABLE = "BENCHYARD_TEST_BRIDGE_KEY"

# Two model calls: the first streamed (a tool call comes back), the second whole; the answer is
# the second's content. The environment and /proc/self/environ go to stderr in base64, which
# scrubbing cannot recognise: what the sandbox held, as the agent could exfiltrate it.
AGENT = r"""
import base64, json, os, sys, urllib.request

base, key = os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"]
dump = json.dumps(dict(os.environ)) + open("/proc/self/environ", "rb").read().decode("latin-1")
sys.stderr.write("ENV:" + base64.b64encode(dump.encode()).decode() + "\n")

def call(messages, stream):
    body = json.dumps({"model": "whatever", "messages": messages, "stream": stream}).encode()
    request = urllib.request.Request(base + "/chat/completions", body, {
        "Authorization": "Bearer " + key, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        text = response.read().decode()
    if not stream:
        return json.loads(text)["choices"][0]["message"]
    message = {"role": "assistant", "content": "", "tool_calls": []}
    for line in text.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                delta = choice["delta"]
                message["content"] += delta.get("content") or ""
                message["tool_calls"] += delta.get("tool_calls") or []
    return message

messages = [{"role": "user", "content": open(os.environ["BENCHYARD_INSTRUCTION_FILE"]).read()}]
calls = int(os.environ.get("CALLS", "2"))
for number in range(calls):
    reply = call(messages, stream=number == 0)
    messages.append(reply)
    messages.append({"role": "user", "content": "tool result %d" % number})
print(reply["content"])
"""

SCRIPT = {
    "replies": [
        {"match": "say ok", "tool_calls": [{"name": "lookup", "arguments": {"q": "ok"}}]},
        {"match": "tool result", "content": "ok"},
    ]
}


def _project(work: Path, url: str, agent: Path, **bridge: Any) -> None:
    budget = bridge.pop("attempt_budget", None)
    config = {
        "providers": {
            "fake": {
                "base_url": url,
                "api_key_env": KEY_VARIABLE,
                "max_retries": 1,
                "retry_backoff_sec": 0.01,
            }
        },
        "prices": {"bridged-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
        "agents": {
            "bridged": {
                "kind": "command",
                "command": f"python3 {agent}",
                "env": {"CALLS": str(bridge.pop("calls", 2))},
                "bridge": {"provider": "fake", "model": "bridged-model", **bridge},
                **({"attempt_budget": budget} if budget else {}),
            }
        },
    }
    (work / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def _attempt(
    cli: Cli,
    store: Store,
    tmp_path: Path,
    llm: FakeLLM,
    *args: str,
    source: str = AGENT,
    **bridge: Any,
) -> AttemptRecord:
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "agent.py").write_text(source, encoding="utf-8")
    _project(cli.cwd, llm.url, agent_dir / "agent.py", **bridge)
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "ok")])
    result = cli("run", str(bench), "--agent", "bridged", "--retries", "0", "-q", *args)
    assert result.exit_code in (0, 1, 3), result.output  # 3: nothing graded (all errors)
    run = store.resolve_run("latest")
    (attempt,) = store.attempts(run.id, with_evidence=True)
    return attempt


def _docker_works() -> bool:
    from benchyard.sandbox.base import SandboxUnavailable
    from benchyard.sandbox.registry import SandboxOptions, build_sandbox

    try:
        build_sandbox("docker", SandboxOptions())
    except SandboxUnavailable:
        return False
    return True


@pytest.fixture(params=["bwrap", "docker"])
def sandbox(request: pytest.FixtureRequest) -> str:
    """Each sandbox that runs an agent without the host's network."""
    if request.param == "docker" and not _docker_works():
        pytest.skip("no docker engine answers")
    return str(request.param)


def _bridged(attempt: AttemptRecord) -> list[Any]:
    return [
        e
        for e in attempt.trajectory or []
        if e.data and e.data.get("via") == "bridge" and e.data.get("source") == "model"
    ]


def test_an_agent_reaches_its_model_only_through_the_bridge(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    with FakeLLM(SCRIPT) as llm:
        attempt = _attempt(cli, store, tmp_path, llm, "--sandbox", sandbox)
        requests, headers = list(llm.requests), list(llm.headers)
    assert attempt.verdict == "passed", (attempt.cause, attempt.stderr)
    calls = _bridged(attempt)
    assert len(calls) == len(requests) == 2
    for event in calls:
        assert event.tokens_in and event.tokens_out and event.ttft_sec is not None
        assert event.cost_usd is not None and event.cost_usd > 0
        assert event.data["model"] == "bridged-model"
    assert calls[0].data["tool_calls"][0]["name"] == "lookup"
    assert calls[1].content == "ok"
    assert [r["model"] for r in requests] == ["bridged-model", "bridged-model"]
    assert all(h["authorization"] == f"Bearer {REAL_KEY}" for h in headers)
    assert attempt.turns == 2
    # What the sandbox held: the bridge's token and URL, never the real key.
    encoded = next(line for line in (attempt.stderr or "").splitlines() if line.startswith("ENV:"))
    held = base64.b64decode(encoded[4:]).decode()
    assert REAL_KEY not in held
    assert "benchyard-bridge-" in held and "OPENAI_BASE_URL" in held
    assert "127.0.0.1:18080" in held  # the relay in the sandbox's own network namespace


def test_an_inline_agent_gets_its_bridge_from_the_command_line(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "ok")])
    with FakeLLM(SCRIPT) as llm:
        _project(cli.cwd, llm.url, tmp_path / "agent.py")  # the provider; its agent is unused
        command = f"python3 {tmp_path / 'agent.py'}"
        result = cli("run", str(bench), "--agent-cmd", command, "--bridge", "fake/bridged-model")
        requests = list(llm.requests)
    assert result.exit_code == 0, result.output
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert attempt.verdict == "passed", (attempt.cause, attempt.stderr)
    assert len(_bridged(attempt)) == len(requests) == 2
    assert all(event.cost_usd for event in _bridged(attempt))  # priced from benchyard.yaml
    for wrong, said in [("fake", "takes PROVIDER/MODEL"), ("nowhere/m", "nowhere")]:
        refused = cli("run", str(bench), "--agent-cmd", command, "--bridge", wrong)
        assert refused.exit_code == 2 and said in refused.output, refused.output
    refused = cli("run", str(bench), "--agent", "bridged", "--bridge", "fake/m")
    assert refused.exit_code == 2 and "--agent-cmd" in refused.output, refused.output


def test_a_provider_down_mid_attempt_is_an_uncounted_error(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    script = {
        "replies": [
            SCRIPT["replies"][0],
            {"match": "tool result", "status": 503},
        ]
    }
    with FakeLLM(script) as llm:
        attempt = _attempt(cli, store, tmp_path, llm)
    assert attempt.verdict == "error", attempt.cause
    assert attempt.failure_kind == "provider_unavailable"
    assert "503" in (attempt.cause or "")
    assert len(_bridged(attempt)) == 1  # the call that came back is kept


def test_a_work_root_too_long_for_a_socket_address_still_reaches_the_bridge(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    work_root = tmp_path / ("a-project-directory-with-a-long-name-" * 3)
    work_root.mkdir()
    assert len(str(work_root)) > 108  # the bridge's socket under it could not be an address
    with FakeLLM(SCRIPT) as llm:
        attempt = _attempt(
            cli, store, tmp_path, llm, "--sandbox", sandbox, "--work-root", str(work_root)
        )
    assert attempt.verdict == "passed", (attempt.cause, attempt.stderr)
    assert len(_bridged(attempt)) == 2


def test_max_turns_stops_the_agent_live(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    with FakeLLM(SCRIPT) as llm:
        attempt = _attempt(cli, store, tmp_path, llm, "--max-turns", "3", calls=50)
        requests = list(llm.requests)
    assert attempt.verdict == "failed"
    assert attempt.failure_kind == "max_turns"
    assert "stopped live by the model bridge" in (attempt.cause or "")
    assert len(requests) == len(_bridged(attempt)) == attempt.turns == 3


@pytest.mark.parametrize(
    ("budget", "spent"),
    [({"tokens": 120}, lambda e: e.tokens_in + e.tokens_out), ({"cost_usd": 0.0002}, None)],
    ids=["tokens", "cost"],
)
def test_the_attempt_budget_stops_the_agent_live(
    cli: Cli,
    store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    budget: dict[str, Any],
    spent: Any,
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    with FakeLLM(SCRIPT) as llm:
        attempt = _attempt(cli, store, tmp_path, llm, calls=50, attempt_budget=budget)
        requests = list(llm.requests)
    assert attempt.verdict == "failed", attempt.cause
    assert attempt.failure_kind == "attempt_budget"
    assert "stopped live by the model bridge" in (attempt.cause or "")
    calls = _bridged(attempt)
    assert 1 <= len(calls) == len(requests) < 50  # the agent asked for 50: stopped on the way
    limit = budget.get("tokens", budget.get("cost_usd"))
    each = [spent(e) if spent else e.cost_usd for e in calls]
    assert sum(each) > limit >= sum(each[:-1])  # the call that went past it was the last


def test_an_attempt_budget_needs_a_bridge_and_a_price_for_dollars(cli: Cli, tmp_path: Path) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "ok")])
    agents: dict[str, Any] = {
        "unbridged": {"command": "echo ok", "attempt_budget": {"tokens": 10}},
        "unpriced": {
            "command": "echo ok",
            "bridge": {"provider": "fake", "model": "no-price"},
            "attempt_budget": {"cost_usd": 1.0},
        },
    }
    config = {"providers": {"fake": {"base_url": "http://127.0.0.1:9/v1"}}, "agents": agents}
    (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    for name, said in [("unbridged", "needs a bridge"), ("unpriced", "needs a price")]:
        result = cli("run", str(bench), "--agent", name, "-q")
        assert result.exit_code == 2, result.output
        assert said in result.output and "Traceback" not in result.output


def test_a_call_in_flight_at_the_timeout_is_recorded_as_cut(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    script = {"replies": [SCRIPT["replies"][0], {"match": "tool result", "delay_sec": 60}]}
    with FakeLLM(script) as llm:
        attempt = _attempt(cli, store, tmp_path, llm, "--timeout", "8")
    assert attempt.verdict == "timeout", attempt.cause
    cut = [e for e in attempt.trajectory or [] if e.data and e.data.get("cut")]
    assert len(cut) == 1 and "model call 2 cut" in cut[0].content
    assert len(_bridged(attempt)) == 1


# Anthropic Messages, streamed (the key as x-api-key), then the Responses API, whole.
OTHER_APIS = r"""
import json, os, urllib.request

def post(url, body, headers):
    request = urllib.request.Request(url, json.dumps(body).encode(), {
        "Content-Type": "application/json", **headers})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read().decode()

question = open(os.environ["BENCHYARD_INSTRUCTION_FILE"]).read()
streamed = post(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", {
    "model": "claude-whatever", "max_tokens": 100, "stream": True,
    "messages": [{"role": "user", "content": question}]},
    {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01"})
assert "tool_use" in streamed, streamed
whole = json.loads(post(os.environ["OPENAI_BASE_URL"] + "/responses", {
    "model": "gpt-whatever", "input": "tool result 0"},
    {"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}))
print("".join(part["text"] for item in whole["output"] if item["type"] == "message"
              for part in item["content"]))
"""


def test_responses_and_messages_pass_through_and_are_recorded(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    with FakeLLM(SCRIPT) as llm:
        attempt = _attempt(cli, store, tmp_path, llm, source=OTHER_APIS)
        apis, headers = list(llm.apis), list(llm.headers)
    assert attempt.verdict == "passed", (attempt.cause, attempt.stderr)
    assert [str(api) for api in apis] == ["messages", "responses"]
    assert headers[0]["x-api-key"] == REAL_KEY and headers[0]["anthropic-version"] == "2023-06-01"
    calls = _bridged(attempt)
    assert [e.data["api"] for e in calls] == ["messages", "responses"]
    assert calls[0].data["tool_calls"][0]["name"] == "lookup"
    assert calls[0].ttft_sec is not None and calls[1].content == "ok"
    for event in calls:
        assert event.tokens_in and event.tokens_out and event.cost_usd


# The raw bodies of a chat completion and a Responses reply, base64 to stderr (past scrubbing).
RAW_BODIES = r"""
import base64, json, os, sys, urllib.request

def post(path, body):
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + path, json.dumps(body).encode(),
        {"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()

raw = post("/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "hi"}]})
raw += post("/responses", {"model": "m", "input": "hi"})
sys.stderr.write("RAW:" + base64.b64encode(raw).decode() + "\n")
print("ok")
"""


def test_a_provider_that_echoes_the_key_hands_the_agent_none_of_it(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    echoing = {"default": {"content": "ok", "echo_headers": True}}
    with FakeLLM(echoing) as llm:
        attempt = _attempt(cli, store, tmp_path, llm, source=RAW_BODIES)
    assert attempt.verdict == "passed", (attempt.cause, attempt.stderr)
    encoded = next(line for line in (attempt.stderr or "").splitlines() if line.startswith("RAW:"))
    raw = base64.b64decode(encoded[4:]).decode()
    assert REAL_KEY not in raw
    assert raw.count("[redacted]") >= 2  # the echo was there, and scrubbed in both replies


def test_a_provider_still_failing_at_the_timeout_is_its_fault_not_the_agents(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    # The second call gets a 429 that asks for a minute's wait: the time runs out meanwhile.
    slow = {"match": "tool result", "status": 429, "retry_after_sec": 60}
    with FakeLLM({"replies": [SCRIPT["replies"][0], slow]}) as llm:
        attempt = _attempt(cli, store, tmp_path, llm, "--timeout", "8")
    assert attempt.verdict == "error", attempt.cause
    assert attempt.failure_kind == "provider_unavailable"
    assert "the provider was failing" in (attempt.cause or "") and "429" in (attempt.cause or "")


def test_the_run_budget_stops_a_bridged_call_that_would_pass_it(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    # Every call costs $0.001 (1000 prompt tokens at $1 per million): a budget of $0.0035 is
    # passed by the fourth call of the first attempt, which asks for 50.
    script = {"default": {"content": "ok", "prompt_tokens": 1000, "completion_tokens": 0}}
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "ok"), scenario("two", "ok")])
    with FakeLLM(script) as llm:
        _project(cli.cwd, llm.url, tmp_path / "agent.py", calls=50)
        result = cli("run", str(bench), "--agent", "bridged", "--budget", "0.0035", "-q")
        requests = list(llm.requests)
    assert result.exit_code == 3, result.output  # nothing graded: its one attempt is an error
    assert "stopped: budget $0.0035 reached" in result.output, result.output
    run = store.resolve_run("latest")
    assert run.status == "queued"  # the attempt not started waits for `benchyard worker`
    (attempt,) = store.attempts(run.id, with_evidence=True)
    assert attempt.verdict == "error" and attempt.failure_kind == "run_budget", attempt.cause
    assert "the run's budget was reached" in (attempt.cause or "")
    calls = _bridged(attempt)
    assert len(calls) == len(requests) == attempt.turns == 4  # its turns: the calls it made
    spent = sum(event.cost_usd or 0 for event in calls)
    assert spent == pytest.approx(attempt.cost_usd) and 0.0035 < spent <= 0.0035 + 0.001
    shown = cli("show", run.id).output
    assert "run_budget" in shown and "the run's budget was reached" in shown, shown


@pytest.mark.parametrize(
    ("source", "apis"),
    [(AGENT, ["chat"] * 2), (OTHER_APIS, ["messages", "responses"])],
    ids=["chat", "responses-messages"],
)
def test_a_canned_model_is_served_by_the_bridge_without_a_provider(
    cli: Cli, store: Store, tmp_path: Path, source: str, apis: list[str]
) -> None:
    (cli.cwd / "replies.yaml").write_text(yaml.safe_dump(SCRIPT), encoding="utf-8")
    config = {"providers": {"canned": {"script": "replies.yaml"}}}  # relative to benchyard.yaml
    (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (tmp_path / "agent.py").write_text(source, encoding="utf-8")
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "ok")])
    command = f"python3 {tmp_path / 'agent.py'}"
    result = cli("run", str(bench), "--agent-cmd", command, "--bridge", "canned/demo", "-q")
    assert result.exit_code == 0, result.output
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert attempt.verdict == "passed", (attempt.cause, attempt.stderr)
    calls = _bridged(attempt)
    assert [event.data["api"] for event in calls] == apis and attempt.turns == 2
    assert all(event.tokens_in and event.tokens_out for event in calls)
    assert calls[0].data["tool_calls"][0]["name"] == "lookup" and calls[1].content == "ok"
    assert attempt.tokens_in == sum(event.tokens_in or 0 for event in calls)
    (status,), _ = provider_statuses(load_config(cli.cwd / "benchyard.yaml"), 1.0)
    assert status.up and status.base_url == f"script {cli.cwd / 'replies.yaml'}", status


def test_a_canned_model_s_script_must_read_and_only_the_bridge_serves_it(
    cli: Cli, tmp_path: Path
) -> None:
    (cli.cwd / "replies.yaml").write_text("replies: [{tool_calls: 3}]", encoding="utf-8")
    config: dict[str, Any] = {
        "providers": {"canned": {"script": "replies.yaml"}},
        "agents": {"direct": {"kind": "openai", "provider": "canned", "model": "demo"}},
    }
    (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "ok")])
    result = cli("run", str(bench), "--agent-cmd", "echo ok", "--bridge", "canned/demo", "-q")
    assert result.exit_code == 2 and "replies.yaml" in result.output, result.output
    assert "Traceback" not in result.output
    (cli.cwd / "replies.yaml").write_text(yaml.safe_dump(SCRIPT), encoding="utf-8")
    result = cli("run", str(bench), "--agent", "direct", "-q")
    assert result.exit_code == 2 and "only the model bridge serves" in result.output, result.output


def test_attempts_running_together_share_the_run_budget(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    # "cheap" makes one call and finishes; the two started after it call in a loop, together,
    # each call $0.001, until the run's spend passes $0.0105.
    script = {"default": {"content": "ok", "prompt_tokens": 1000, "completion_tokens": 0}}
    calls = 'calls = 1 if os.environ["BENCHYARD_SCENARIO_ID"] == "cheap" else 50'
    source = AGENT.replace('calls = int(os.environ.get("CALLS", "2"))', calls)
    assert source != AGENT
    (tmp_path / "agent.py").write_text(source, encoding="utf-8")
    names = ["cheap", "two", "three"]
    bench = write_benchmark(tmp_path / "bench", [scenario(name, "ok") for name in names])
    with FakeLLM(script) as llm:
        _project(cli.cwd, llm.url, tmp_path / "agent.py")
        cli("run", str(bench), "--agent", "bridged", "-j", "3", "--budget", "0.0105", "-q")
    attempts = {a.scenario_id: a for a in store.attempts(store.resolve_run("latest").id)}
    assert attempts["cheap"].verdict == "passed", attempts["cheap"].cause
    assert {attempts[name].failure_kind for name in ("two", "three")} == {"run_budget"}
    spent = sum(attempt.cost_usd or 0 for attempt in attempts.values())
    # At most one call per attempt running; on a loaded machine one of the two may spend the rest
    # of the budget before the other's first call, which the bridge then refuses.
    assert 0.0105 < spent <= 0.0105 + 2 * 0.001 + 1e-9
