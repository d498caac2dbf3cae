"""The MCP server driven by the SDK's own client, over stdio and streamable HTTP: list, read a
report, queue a run that a real `benchyard worker` finishes, and propose a change that stays
pending until `benchyard proposals accept` (or is refused with the loader's message)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from benchyard.automation.assistant import Workspace
from benchyard.config import ProjectConfig
from benchyard.mcp_server.server import build_server
from benchyard.store.store import Store
from benchyard.web.tokens import new_token
from tests.integration.queue.helpers import WorkerProcess
from tests.integration.web.support import BENCHMARK_YAML, write_web_benchmark
from tests.support import Cli

pytestmark = pytest.mark.slow

PROJECT_YAML = """\
agents:
  mine:
    kind: command
    command: echo right
"""
TOOLS = {
    "benchmarks_list",
    "scenarios_list",
    "scenario_show",
    "runs_list",
    "report_read",
    "runs_compare",
    "proposals_list",
    "proposal_show",
    "run_enqueue",
    "benchmark_create",
    "benchmark_update",
}


MCP_TOKEN = new_token()  # every MCP server over HTTP needs one, loopback included


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def http_server(cli: Cli, *options: str) -> Iterator[str]:
    port = free_port()
    log = (cli.cwd / f"mcp-{port}.log").open("w")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchyard",
            "mcp",
            "--transport",
            "http",
            "--port",
            str(port),
            "--db",
            cli.db_url,
            "--token",
            MCP_TOKEN,
            *options,
        ],
        cwd=cli.cwd,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError((cli.cwd / f"mcp-{port}.log").read_text()) from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@asynccontextmanager
async def connected(transport: str, cli: Cli, *options: str) -> AsyncIterator[Client]:
    if transport == "stdio":
        parameters = StdioServerParameters(
            command=sys.executable,
            args=["-m", "benchyard", "mcp", "--db", cli.db_url, *options],
            cwd=str(cli.cwd),
            env={"PYTHONPATH": os.environ.get("PYTHONPATH", "")},
        )
        async with Client(parameters) as client:
            yield client
        return
    with http_server(cli, *options) as url:
        bearer = create_mcp_http_client(headers={"authorization": f"Bearer {MCP_TOKEN}"})
        async with Client(streamable_http_client(url, http_client=bearer)) as client:
            yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return dict(result.structured_content)


async def refusal(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return "\n".join(getattr(part, "text", "") for part in result.content)


@pytest.fixture
def project(cli: Cli) -> Path:
    (cli.cwd / "benchyard.yaml").write_text(PROJECT_YAML, encoding="utf-8")
    return write_web_benchmark(cli.cwd / "benches" / "webbench")


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_assistant_lists_queues_a_run_a_worker_finishes_and_reads_its_report(
    transport: str, project: Path, cli: Cli, store: Store, db_url: str, tmp_path: Path
) -> None:
    async with connected(transport, cli) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools == TOOLS
        benchmarks = (await call(client, "benchmarks_list"))["benchmarks"]
        mine = next(b for b in benchmarks if b["name"] == "webbench")
        assert (mine["origin"], mine["scenarios"], mine["editable"]) == ("local", 4, True)
        assert any(b["name"] == "starter" and not b["editable"] for b in benchmarks)
        scenarios = await call(
            client, "scenarios_list", benchmark="webbench", filters=["category:math"]
        )
        assert [s["id"] for s in scenarios["scenarios"]] == ["s1", "s2"]
        shown = await call(client, "scenario_show", benchmark="webbench", scenario_id="s1")
        assert shown["file"] == "scenarios/main.yaml" and shown["scenario"]["reference"] == "4"

        queued = await call(client, "run_enqueue", benchmark="webbench", agent="oracle")
        run_id = queued["run_id"]
        assert queued["status"] == "queued" and queued["planned_attempts"] == 4
        worker = WorkerProcess(db_url, cli.cwd, tmp_path / "worker.log", "--drain")
        assert worker.process.wait(timeout=120) == 0, (tmp_path / "worker.log").read_text()
        assert store.get_run(run_id).status == "finished"

        runs = (await call(client, "runs_list", limit=5))["runs"]
        assert runs[0]["id"] == run_id and runs[0]["verdicts"] == {"passed": 4}
        report = await call(client, "report_read", run=run_id[:8])
        assert report["summary"]["passed"] == 4 and report["summary"]["accuracy"] == 1.0
        assert report["run"]["benchmark"]["name"] == "webbench"

        compared = await call(client, "runs_compare", baseline=run_id, run=run_id)
        assert compared["baseline"]["id"] == run_id and "regression" in compared
        # A run with nothing finished yet was compared as "no significant change" on 0 pairs; it
        # is refused now, with the reason (issue 22, item 5).
        again = await call(client, "run_enqueue", benchmark="webbench", agent="oracle")
        refused = await refusal(client, "runs_compare", baseline=run_id, run=again["run_id"])
        assert f"run {again['run_id'][:8]} is partial: 0 of its 4 planned attempts" in refused


async def test_run_enqueue_takes_the_network_as_run_does(project: Path, store: Store) -> None:
    """`network` takes what `run --network` takes, written one way; `allow_network` is its alias
    of `all`; a bad value or the two disagreeing is refused, and nothing is queued."""
    config = ProjectConfig(agents={"mine": {"kind": "command", "command": "echo right"}})
    workspace = Workspace(
        store=store, config=config, benchmark_dirs=(project.parent,), agent_repo=project
    )
    async with Client(build_server(workspace)) as client:
        for given, recorded in (
            ({}, "bridge"),
            ({"network": "none"}, "none"),
            ({"network": "API.example.com:443, api.example.com:443"}, "api.example.com:443"),
            ({"allow_network": True}, "all"),
        ):
            queued = await call(
                client, "run_enqueue", benchmark="webbench", agent="oracle", **given
            )
            assert store.get_run(queued["run_id"]).settings["network"] == recorded
        before = len(store.list_runs())
        for given, words in (
            ({"network": "example.com"}, "network: 'example.com' is not HOST:PORT"),
            ({"network": "none", "allow_network": True}, "give one of them"),
        ):
            assert words in await refusal(
                client, "run_enqueue", benchmark="webbench", agent="oracle", **given
            )
        assert len(store.list_runs()) == before


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_benchmark_update_stays_pending_until_a_person_accepts_it(
    transport: str, project: Path, cli: Cli
) -> None:
    scenarios_file = project / "scenarios" / "main.yaml"
    changed = {
        "id": "s2",
        "category": "math",
        "stimulus": "What is 3 + 4?",
        "reference": "7",
        "checks": [{"type": "equals", "value": "7"}],
    }
    async with connected(transport, cli) as client:
        proposed = await call(
            client,
            "benchmark_update",
            benchmark="webbench",
            scenarios=[changed],
            title="harder s2",
            rationale="3 + 3 is too easy",
        )
        assert proposed["status"] == "pending" and "nothing is written" in proposed["message"]
        assert "+  stimulus: What is 3 + 4?" in proposed["diff"]
        assert scenarios_file.read_text(encoding="utf-8") == BENCHMARK_YAML

        invalid = await refusal(
            client,
            "benchmark_update",
            benchmark="webbench",
            scenarios=[{**changed, "checks": [{"type": "no_such_check", "value": 1}]}],
        )
        assert "scenarios/main.yaml:" in invalid and "unknown check type 'no_such_check'" in invalid
        pending = (await call(client, "proposals_list", status="pending"))["proposals"]
        assert [p["id"] for p in pending] == [proposed["id"]]  # the invalid one made none

    accepted = cli("proposals", "accept", proposed["id"][:8], "--by", "reviewer")
    assert accepted.exit_code == 0, accepted.output
    assert "What is 3 + 4?" in scenarios_file.read_text(encoding="utf-8")
    async with connected(transport, cli) as client:
        shown = await call(client, "proposal_show", proposal=proposed["id"])
        assert (shown["status"], shown["decided_by"]) == ("accepted", "reviewer")


async def test_a_read_only_server_offers_nothing_that_changes_anything(
    project: Path, cli: Cli
) -> None:
    async with connected("stdio", cli, "--read-only") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
    assert tools == TOOLS - {"run_enqueue", "benchmark_create", "benchmark_update"}
