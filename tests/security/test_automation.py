"""Attacks through automation: an assistant's proposal that tries to write outside its benchmark,
webhooks that would carry secrets, and MCP calls that try to run a command nobody declared."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from benchyard import secrets
from benchyard.automation import events
from benchyard.automation.assistant import Workspace
from benchyard.automation.proposals import (
    ProposalInvalid,
    ProposalRefused,
    accept,
    list_proposals,
    propose_create,
    propose_update,
)
from benchyard.automation.webhook_config import WebhookConfig, register_webhook_secrets
from benchyard.automation.webhooks import deliver_due, emit, list_deliveries, tries_of
from benchyard.config import ProjectConfig
from benchyard.errors import BenchyardError
from benchyard.mcp_server.server import build_server
from benchyard.store.store import Store
from tests.integration.automation.helpers import receiver, write_config
from tests.integration.queue.helpers import WorkerProcess, wait_for
from tests.integration.web.support import BENCHMARK_YAML, write_web_benchmark
from tests.security.hostile_receivers import hostile_receiver
from tests.support import UNSANDBOXED, Cli

SCENARIO = {
    "id": "s9",
    "category": "math",
    "stimulus": "What is 1 + 1?",
    "reference": "2",
    "checks": [{"type": "equals", "value": "2"}],
}


@pytest.fixture
def bench(project: Path) -> Path:
    return write_web_benchmark(project / "benches" / "webbench")


def _nothing_outside(project: Path, before: set[Path]) -> None:
    after = {path for path in project.rglob("*")}
    assert after == before, sorted(after - before)


# ---- proposals stay inside their benchmark ----------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "../escaped.txt",
        "../../benchyard.yaml",
        "/etc/cron.d/owned",
        "scenarios/../../escaped.txt",
        ".git/hooks/pre-commit",
        "scenarios/.hidden",
        "scenarios\\..\\..\\escaped.txt",
        "scenarios/fixtures/\x00nul.txt",
        "C:/windows/owned.txt",
    ],
)
def test_a_proposal_cannot_name_a_file_outside_the_benchmark(
    store: Store, bench: Path, project: Path, path: str
) -> None:
    before = set(project.rglob("*"))
    with pytest.raises(ProposalInvalid, match="files"):
        propose_update(store, bench, scenarios=[SCENARIO], files={path: "owned\n"})
    with pytest.raises(ProposalInvalid, match="scenario_file"):
        propose_update(store, bench, scenarios=[SCENARIO], scenario_file=path)
    assert list_proposals(store) == []
    _nothing_outside(project, before)


@pytest.mark.parametrize(
    "source", ["../../../benchyard.yaml", "/etc/passwd", "fixtures/../../../../etc/passwd"]
)
def test_a_scenario_fixture_leaving_the_benchmark_is_refused_by_the_loader(
    store: Store, bench: Path, source: str
) -> None:
    hostile = {**SCENARIO, "fixtures": {"files": [{"src": source, "dest": "stolen.txt"}]}}
    with pytest.raises(ProposalInvalid) as refused:
        propose_update(store, bench, scenarios=[hostile])
    assert "scenarios/main.yaml:" in str(refused.value) and "fixtures" in str(refused.value)
    assert list_proposals(store) == []


def test_a_link_inside_the_benchmark_is_never_written_through(
    store: Store, bench: Path, project: Path
) -> None:
    outside = project / "outside"
    outside.mkdir()
    fixtures = bench / "scenarios" / "fixtures"
    (fixtures / "linked").symlink_to(outside)
    with pytest.raises(ProposalRefused, match="is a link"):
        propose_update(store, bench, files={"scenarios/fixtures/linked/evil.txt": "owned"})
    # a link put in place of a directory after the proposal was made
    proposal = propose_update(store, bench, files={"scenarios/fixtures/later/evil.txt": "owned"})
    (fixtures / "later").symlink_to(outside)
    with pytest.raises(BenchyardError, match="link"):
        accept(store, proposal.id)
    assert list(outside.iterdir()) == []


def test_a_new_benchmark_cannot_be_named_out_of_its_directory(store: Store, project: Path) -> None:
    before = set(project.rglob("*"))
    for name in ("../escaped", "..", ".hidden", "a/b", "/tmp/x"):
        with pytest.raises(ProposalInvalid, match="name"):
            propose_create(store, project, name=name, version="1", scenarios=[SCENARIO])
    _nothing_outside(project, before)


# ---- webhooks carry no secrets ----------------------------------------------------------------


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {
        "SECURITY_HOOK_SECRET": "whsec-never-sent-3141592653",
        "SECURITY_PROVIDER_KEY": "sk-provider-key-2718281828",
        "SECURITY_HOOK_URL": "https://hooks.example/services/T000/B000/xoxb-url-token-1618",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    secrets.register_variables(["SECURITY_PROVIDER_KEY"])
    yield values
    secrets.forget_all()


def test_a_webhook_url_with_credentials_is_refused() -> None:
    with pytest.raises(ValueError, match="must not carry credentials"):
        WebhookConfig(url="https://user:hunter2@hooks.example/x", secret_env="X")


def test_payloads_tries_and_listings_never_carry_a_secret(
    store: Store, registered: dict[str, str], project: Path
) -> None:
    leaked = registered["SECURITY_PROVIDER_KEY"]
    with receiver() as got:
        hooks = {
            "ci": WebhookConfig(url=got.url, secret_env="SECURITY_HOOK_SECRET"),
            "chat": WebhookConfig(url_env="SECURITY_HOOK_URL", secret_env="SECURITY_HOOK_SECRET"),
        }
        register_webhook_secrets(hooks)

        def payload(web: str) -> dict[str, Any]:  # an agent echoed a key into its answer
            return {"failures": [{"cause": f"the agent printed {leaked}"}], "links": {"run": web}}

        emit(store, {"ci": hooks["ci"]}, events.RUN_FINISHED, payload)
        emit(store, {"chat": hooks["chat"]}, events.RUN_FINISHED, payload)
        deliver_due(store, {"ci": hooks["ci"]})
    (request,) = got.received
    body = request.body.decode()
    everything = [body, *request.headers.values(), request.path]
    for delivery in list_deliveries(store):
        everything += [delivery.url, delivery.payload]
        everything += [
            str(t.response) + str(t.error)
            for t in tries_of(store, [delivery.id]).get(delivery.id, [])
        ]
    for value in registered.values():
        assert all(value not in text for text in everything), value
    assert "[redacted]" in body
    chat = next(d for d in list_deliveries(store) if d.webhook == "chat")
    assert chat.url == "[redacted] ($SECURITY_HOOK_URL)"


def test_a_run_announced_by_webhook_carries_no_agent_secret(
    project_cli: Cli, project: Path, registered: dict[str, str], store: Store
) -> None:
    key = registered["SECURITY_PROVIDER_KEY"]
    bench = write_web_benchmark(project / "benches" / "webbench")
    with receiver() as got:
        (project / "benchyard.yaml").write_text(
            "agents:\n"
            "  leaky:\n"
            "    kind: command\n"
            '    command: echo "$SECURITY_PROVIDER_KEY"\n'
            "    pass_env: [SECURITY_PROVIDER_KEY]\n"
            "webhooks:\n"
            "  ci:\n"
            f"    url: {got.url}\n"
            "    secret_env: SECURITY_HOOK_SECRET\n",
            encoding="utf-8",
        )
        ran = project_cli("run", str(bench), "--agent", "leaky", *UNSANDBOXED, "-q")
        assert ran.exit_code == 0, ran.output
    (request,) = got.received
    payload = request.json()
    assert payload["summary"]["failed"] == 4
    assert key not in request.body.decode()
    assert registered["SECURITY_HOOK_SECRET"] not in request.body.decode()
    assert "[redacted]" in request.body.decode()  # the echoed key, scrubbed


# ---- MCP tools run only what benchyard.yaml declares -----------------------------------------


async def _mcp(workspace: Workspace, tool: str, **arguments: Any) -> tuple[bool, str]:
    async with Client(build_server(workspace)) as client:
        result = await client.call_tool(tool, arguments)
    text = "\n".join(getattr(part, "text", "") for part in result.content)
    return bool(result.is_error), text


@pytest.fixture
def workspace(store: Store, project: Path, bench: Path) -> Workspace:
    config = ProjectConfig(
        agents={"declared": {"kind": "command", "command": "echo right"}}, base_dir=project
    )
    return Workspace(store=store, config=config, benchmark_dirs=(project,), agent_repo=project)


@pytest.mark.parametrize(
    "agent",
    [
        f"touch {os.devnull}-owned",
        "python3 -c 'import os; os.system(\"id\")'",
        "sh",
        "command",
        "/bin/sh",
        "declared; rm -rf /",
    ],
)
async def test_mcp_runs_no_agent_that_benchyard_yaml_does_not_declare(
    workspace: Workspace, store: Store, agent: str
) -> None:
    failed, text = await _mcp(workspace, "run_enqueue", benchmark="webbench", agent=agent)
    assert failed and "an assistant runs only declared agents" in text
    assert store.list_runs() == []


async def test_mcp_cannot_run_unsandboxed_nor_name_a_benchmark_by_path(
    workspace: Workspace, store: Store, bench: Path
) -> None:
    failed, text = await _mcp(
        workspace, "run_enqueue", benchmark="webbench", agent="declared", sandbox="none"
    )
    assert failed and "unsandboxed" in text
    failed, text = await _mcp(workspace, "run_enqueue", benchmark=str(bench), agent="oracle")
    assert failed and "no benchmark named" in text
    assert store.list_runs() == []


async def test_no_mcp_tool_takes_a_command(workspace: Workspace) -> None:
    async with Client(build_server(workspace)) as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        names = set(tool.input_schema.get("properties", {}))
        assert not names & {"agent_cmd", "command", "cmd", "shell", "path"}, tool.name


async def test_mcp_proposals_cannot_reach_benchyard_yaml_or_the_built_in_library(
    workspace: Workspace, store: Store, bench: Path, project: Path
) -> None:
    failed, text = await _mcp(
        workspace,
        "benchmark_update",
        benchmark="webbench",
        files={"../../benchyard.yaml": "agents: {evil: {kind: command, command: id}}"},
    )
    assert failed and "'..' leaves the benchmark directory" in text
    failed, text = await _mcp(
        workspace, "benchmark_update", benchmark="starter", scenarios=[SCENARIO]
    )
    assert failed and "built into benchyard" in text
    assert list_proposals(store) == []
    assert not (project / "benchyard.yaml").exists()
    assert (bench / "scenarios" / "main.yaml").read_text(encoding="utf-8") == BENCHMARK_YAML


async def test_mcp_over_http_elsewhere_than_loopback_needs_its_token(workspace: Workspace) -> None:
    import httpx

    from benchyard.mcp_server.http import http_app
    from benchyard.web.tokens import token_hash

    server = build_server(workspace)
    with pytest.raises(ValueError, match="needs a token"):
        http_app(server, "0.0.0.0", None)
    app = http_app(server, "0.0.0.0", token_hash("the-right-token-0123456789"))
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://bench.example"
    ) as client:
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "Basic x"}):
            answer = await client.post("/mcp", json=hello, headers=headers)
            assert answer.status_code == 401, headers


# ---- a webhook receiver is untrusted -------------------------------------------------------


def _hostile_hook(url: str, **extra: object) -> dict[str, WebhookConfig]:
    hook = {"url": url, "secret_env": "SECURITY_HOOK_SECRET", "max_tries": 1, **extra}
    return {"ci": WebhookConfig.model_validate(hook)}


def test_a_receiver_answering_without_end_is_read_a_few_kilobytes_only(
    store: Store, registered: dict[str, str]
) -> None:
    # Before: the whole body was read into memory (7.9 GB RSS for a receiver that never ended).
    with hostile_receiver("huge", limit_bytes=512 << 20) as hostile:
        hooks = _hostile_hook(hostile.url)
        emit(store, hooks, events.PING, events.ping_payload("ci"))
        (delivery,) = deliver_due(store, hooks)
    assert hostile.sent_bytes < 64 << 20  # the sender hung up, far before the 512 MiB it was sent
    assert (delivery.state, delivery.last_status) == ("delivered", 200)
    (attempt,) = tries_of(store, [delivery.id])[delivery.id]
    assert attempt.response is not None and 0 < len(attempt.response) <= 4096


def test_a_receiver_trickling_its_answer_is_held_to_the_delivery_deadline(
    store: Store, registered: dict[str, str]
) -> None:
    # Before: each byte restarted httpx's read timeout, and the delivery was held for as long as
    # the receiver kept trickling (180 s, and for ever).
    with hostile_receiver("trickle") as hostile:
        hooks = _hostile_hook(hostile.url, timeout_sec=1.0)
        emit(store, hooks, events.PING, events.ping_payload("ci"))
        (delivery,) = deliver_due(store, hooks)
        assert not hostile.stop.is_set()  # the receiver was still trickling when it ended
    assert (delivery.state, delivery.last_status) == ("failed", None)
    (attempt,) = tries_of(store, [delivery.id])[delivery.id]
    assert "had not answered within the delivery's deadline of 1 s" in str(attempt.error)


def test_a_slow_receiver_delays_no_other_run_of_a_worker(
    project: Path, db_url: str, store: Store, registered: dict[str, str], tmp_path: Path
) -> None:
    # Before: the worker's automation thread sent deliveries itself, so while one receiver held
    # a delivery it handled no other run that ended (its announcement never made) and fired no
    # schedule.
    bench = write_web_benchmark(project / "benches" / "webbench")
    cli = Cli(db_url, project)
    with hostile_receiver("trickle") as hostile:
        write_config(project, hostile.url, events=["run.finished"], timeout_sec=120, max_tries=1)
        (project / "benchyard.yaml").write_text(
            (project / "benchyard.yaml")
            .read_text()
            .replace("BENCHYARD_TEST_WEBHOOK_SECRET", "SECURITY_HOOK_SECRET"),
            encoding="utf-8",
        )
        first = _enqueue(cli, bench)
        worker = WorkerProcess(db_url, project, tmp_path / "worker.log", "--poll", "0.05")
        try:
            wait_for(lambda: hostile.connections >= 1, 120, "the first run's announcement")
            second = _enqueue(cli, bench)
            wait_for(lambda: store.get_run(second).status == "finished", 120, "the second run")
            wait_for(
                lambda: {d.run_id for d in list_deliveries(store)} == {first, second},
                60,
                "the second run's announcement, made while the first is held",
            )
        finally:
            assert worker.stop() == 0
    assert hostile.connections == 1  # the first announcement was still held all along


def _enqueue(cli: Cli, bench: Path) -> str:
    queued = cli("run", str(bench), "--agent", "oracle", *UNSANDBOXED, "--enqueue")
    assert queued.exit_code == 0, queued.output
    return queued.output.strip().splitlines()[-1]
