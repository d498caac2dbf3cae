"""Hostile agents (and providers): exhausting the harness.

An agent that opens thousands of connections to its tool server must not take benchyard's file
descriptors from the other attempts (nor fill its log with tracebacks); one that holds a
connection idle, or trickles a request, is cut off. A provider that keeps a reply alive with a byte
now and then, never finishing it, is a provider fault (retried, then an uncounted error), never an
agent timeout counted against the agent."""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from benchyard.agents import tool_server
from benchyard.agents.tool_server import serve_tools
from benchyard.agents.toolbox import ToolBox
from benchyard.providers.fake_server import FakeLLM
from benchyard.spec.tools import ToolSpec
from benchyard.store.store import Store
from tests.integration.providers.conftest import StartFake, write_project
from tests.support import Cli, write_benchmark

# Floods and stalls; the store only records the attempts they hit.
pytestmark = pytest.mark.store_in_passing

WEATHER_TOOL: dict[str, Any] = {
    "name": "get_weather",
    "description": "Current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "result": {"temp_c": 18},
}
CALL = json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}})
FLOOD = 400  # connections: more than the harness below has descriptors
HARNESS_FD_LIMIT = 128

# Two attempts' tool servers in a process of their own with few file descriptors.
HARNESS = f"""
import asyncio, contextlib, json, resource, sys
from pathlib import Path
from benchyard.agents.tool_server import serve_tools
from benchyard.agents.toolbox import ToolBox
from benchyard.spec.tools import ToolSpec

async def main():
    resource.setrlimit(resource.RLIMIT_NOFILE, ({HARNESS_FD_LIMIT}, {HARNESS_FD_LIMIT}))
    tool = ToolSpec.model_validate(json.loads(sys.argv[1]))
    async with contextlib.AsyncExitStack() as stack:
        servers = []
        for name in ("a", "b"):
            io_dir = Path(sys.argv[2]) / name
            io_dir.mkdir()
            servers.append(await stack.enter_async_context(serve_tools(ToolBox([tool], []), io_dir)))
        print(json.dumps(servers), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

asyncio.run(main())
"""


@pytest.fixture
def fake_llm() -> Iterator[StartFake]:
    with ExitStack() as stack:
        yield lambda script: stack.enter_context(FakeLLM(script))


class _UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path: str) -> None:
        super().__init__("tools", timeout=30)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(30)
        self.sock.connect(self.path)


def call_tool(env: dict[str, str], over: str) -> dict[str, Any]:
    """POST /call to a tool server, over its Unix socket or TCP."""
    if over == "socket":
        connection: http.client.HTTPConnection = _UnixHTTP(env["BENCHYARD_TOOLS_SOCKET"])
        path = "/call"
    else:
        address, _, prefix = env["BENCHYARD_TOOLS_URL"].removeprefix("http://").partition("/")
        host, _, port = address.partition(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        path = f"/{prefix}/call"
    try:
        connection.request("POST", path, CALL)
        return dict(json.loads(connection.getresponse().read()))
    finally:
        connection.close()


def flood(env: dict[str, str], count: int) -> list[socket.socket]:
    """Open `count` connections to a tool server, half over TCP and half over its socket (those
    refused outright, a full backlog, are left out)."""
    address = env["BENCHYARD_TOOLS_URL"].removeprefix("http://").partition("/")[0]
    host, _, port = address.partition(":")
    opened = []
    for number in range(count):
        family = socket.AF_INET if number % 2 else socket.AF_UNIX
        sock = socket.socket(family)
        sock.settimeout(30)
        try:
            sock.connect((host, int(port)) if number % 2 else env["BENCHYARD_TOOLS_SOCKET"])
        except OSError:
            sock.close()
            continue
        opened.append(sock)
    return opened


def test_a_connection_flood_leaves_the_other_attempts_tools_working(tmp_path: Path) -> None:
    harness = subprocess.Popen(
        [sys.executable, "-c", HARNESS, json.dumps(WEATHER_TOOL), str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert harness.stdout is not None
        attacked, other = json.loads(harness.stdout.readline())
        held = flood(attacked, FLOOD)
        try:
            for over in ("socket", "tcp"):
                assert call_tool(other, over)["result"] == '{"temp_c": 18}'
        finally:
            for sock in held:
                sock.close()
        assert "result" in call_tool(attacked, "socket")  # and it recovers once they are gone
    finally:
        _, errors = harness.communicate(input="", timeout=60)
    assert harness.returncode == 0, errors
    assert "Traceback" not in errors and "out of system resource" not in errors, errors


def test_connections_over_the_cap_are_closed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tool_server, "MAX_CONNECTIONS", 3, raising=False)

    async def scenario() -> tuple[list[bytes], bytes, bytes]:
        toolbox = ToolBox([ToolSpec.model_validate(WEATHER_TOOL)], [])
        async with serve_tools(toolbox, tmp_path) as env:
            socket_path = env["BENCHYARD_TOOLS_SOCKET"]
            held = [await asyncio.open_unix_connection(socket_path) for _ in range(3)]
            answers = [await _exchange(reader, writer) for reader, writer in held]
            reader, writer = await asyncio.open_unix_connection(socket_path)
            refused = await asyncio.wait_for(reader.read(), 30)  # closed: over the cap
            writer.close()
            held[0][1].close()
            await held[0][1].wait_closed()
            again = await _after_a_free_slot(socket_path)
        return answers, refused, again

    answers, refused, again = asyncio.run(scenario())
    assert all(b'"temp_c\\": 18' in answer for answer in answers)
    assert refused == b""
    assert b'"temp_c\\": 18' in again


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
    """One keep-alive request over an open connection; the response's body."""
    writer.write(
        b"POST /call HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s" % (len(CALL), CALL.encode())
    )
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    return await asyncio.wait_for(reader.readexactly(length), 30)


async def _after_a_free_slot(socket_path: str) -> bytes:
    """A request on a new connection, retried while the server has not yet seen a slot free."""
    for _ in range(100):
        reader, writer = await asyncio.open_unix_connection(socket_path)
        try:
            return await _exchange(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            await asyncio.sleep(0.05)
        finally:
            writer.close()
    raise AssertionError("no connection was ever served again")


def test_idle_and_trickled_requests_are_cut_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tool_server, "REQUEST_TIMEOUT_SEC", 0.5, raising=False)

    async def trickle(writer: asyncio.StreamWriter) -> None:
        writer.write(b"POST /call HTTP/1.1\r\nContent-Length: 2")
        while not writer.is_closing():
            writer.write(b"0")  # the header line never ends
            try:
                await writer.drain()
            except ConnectionError:
                return
            await asyncio.sleep(0.05)

    async def scenario() -> tuple[bytes, bytes, dict[str, Any]]:
        toolbox = ToolBox([ToolSpec.model_validate(WEATHER_TOOL)], [])
        async with serve_tools(toolbox, tmp_path) as env:
            port = int(env["BENCHYARD_TOOLS_URL"].rsplit(":", 1)[1].split("/")[0])
            idle_reader, idle_writer = await asyncio.open_connection("127.0.0.1", port)
            slow_reader, slow_writer = await asyncio.open_unix_connection(
                env["BENCHYARD_TOOLS_SOCKET"]
            )
            trickling = asyncio.ensure_future(trickle(slow_writer))
            idle = await asyncio.wait_for(idle_reader.read(), 30)
            slow = await asyncio.wait_for(slow_reader.read(), 30)
            trickling.cancel()
            for writer in (idle_writer, slow_writer):
                writer.close()
            answer = await asyncio.to_thread(call_tool, env, "tcp")
        return idle, slow, answer

    idle, slow, answer = asyncio.run(scenario())
    assert idle == b""
    assert slow == b"" or slow.startswith(b"HTTP/1.1 400")
    assert answer["result"] == '{"temp_c": 18}'


FLOODING_AGENT = """
import json, os, select, socket, sys, time
path = os.environ["BENCHYARD_TOOLS_SOCKET"]
opened = []
for _ in range(200):
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(path)
    opened.append(sock)
closed, deadline = set(), time.monotonic() + 20
while len(closed) < 200 - 32 and time.monotonic() < deadline:
    ready, _, _ = select.select([s for s in opened if s not in closed], [], [], 1)
    closed.update(s for s in ready if s.recv(1) == b"")
for sock in opened:
    sock.close()

def call():
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(path)
    body = json.dumps({"name": "get_weather", "arguments": {"city": "Paris"}}).encode()
    head = b"POST /call HTTP/1.1\\r\\nConnection: close\\r\\nContent-Length: %d\\r\\n\\r\\n"
    sock.sendall(head % len(body) + body)
    reply = b""
    while chunk := sock.recv(65536):
        reply += chunk
    return json.loads(json.loads(reply.split(b"\\r\\n\\r\\n", 1)[1])["result"])

for _ in range(100):  # the server may not have seen all the closes yet: its slots are still taken
    try:
        result = call()
        break
    except (ConnectionError, IndexError):
        time.sleep(0.1)
print(f"closed {len(closed)}; {result['temp_c']} degrees")
"""


def test_a_sandboxed_flood_is_capped_and_the_socket_still_serves(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(FLOODING_AGENT)
    scenario = {
        "id": "flood",
        "stimulus": "What is the weather in Paris?",
        "tools": [WEATHER_TOOL],
        "checks": [{"type": "contains", "value": "18 degrees"}],
    }
    bench = write_benchmark(tmp_path / "bench", [scenario])
    result = cli("run", str(bench), "--agent-cmd", f"{sys.executable} {agent}", "-q")
    assert result.exit_code == 0, result.output
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert attempt.verdict == "passed", (attempt.cause, attempt.stderr)
    closed = int((attempt.answer or "").split()[1].rstrip(";"))
    assert closed >= 200 - 32  # tool_server.MAX_CONNECTIONS


TRICKLE = {"default": {"fault": "trickle", "chunk_delay_sec": 0.1}}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_a_trickling_provider_is_a_provider_fault(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake, stream: bool
) -> None:
    llm = fake_llm(TRICKLE)
    write_project(cli.cwd, llm.url, agent={"stream": stream})
    # 2 s, not less: on a loaded machine a shorter deadline can pass before the fake has even
    # read the request, which it then never counts
    _set_provider(cli, request_timeout_sec=2, max_retries=1)
    bench = write_benchmark(tmp_path / "bench", [_question()])
    cli("run", str(bench), "--agent", "model", "--timeout", "30", *_one_retry())
    tries = store.attempts(store.resolve_run("latest").id, include_superseded=True)
    assert [(t.verdict, t.failure_kind) for t in tries] == [("error", "provider_unavailable")] * 2
    assert "no complete reply within 2 s (request_timeout_sec)" in (tries[-1].cause or "")
    assert len(llm.requests) == 4  # two tries of the call in each of two tries of the attempt


@pytest.mark.parametrize(
    ("script", "timeout", "expected"),
    [
        (TRICKLE, "0.3", "no complete reply within 5 s"),
        # The tokens come well before the attempt's deadline; nothing comes after it.
        (
            {"default": {**TRICKLE["default"], "content": "The answer is"}},
            "3",
            "no complete reply within 5 s",
        ),
        # The 503 comes well before the deadline, which passes while the retry waits.
        ({"default": {"status": 503, "retry_after_sec": 30}}, "2", "the provider was failing"),
    ],
    ids=["trickling", "trickling-after-tokens", "retrying"],
)
def test_a_stalled_provider_at_the_attempts_deadline_is_not_the_agents_timeout(
    tmp_path: Path,
    cli: Cli,
    store: Store,
    fake_llm: StartFake,
    script: dict[str, Any],
    timeout: str,
    expected: str,
) -> None:
    llm = fake_llm(script)
    write_project(cli.cwd, llm.url)
    _set_provider(cli, request_timeout_sec=5, max_retry_after_sec=30)
    bench = write_benchmark(tmp_path / "bench", [_question()])
    cli("run", str(bench), "--agent", "model", "--timeout", timeout, "--retries", "0", "-q")
    (attempt,) = store.attempts(store.resolve_run("latest").id, include_superseded=True)
    assert (attempt.verdict, attempt.failure_kind) == ("error", "provider_unavailable")
    assert expected in (attempt.cause or "")


def _question() -> dict[str, Any]:
    return {"id": "q", "stimulus": "hi", "checks": [{"type": "contains", "value": "x"}]}


def _one_retry() -> tuple[str, ...]:
    return ("--retries", "1", "--retry-backoff", "0.01", "-q")


def _set_provider(cli: Cli, **settings: Any) -> None:
    import yaml

    path = cli.cwd / "benchyard.yaml"
    config = yaml.safe_load(path.read_text())
    config["providers"]["fake"].update(settings)
    path.write_text(yaml.safe_dump(config))


# ---- a workdir in RAM is memory --------------------------------------------------------------


@pytest.mark.parametrize("sandbox", ["bwrap", "docker"])
def test_files_left_in_a_ram_workdir_across_turns_count_against_the_memory_limit(
    sandbox: str, tmp_path: Path, db_url: str
) -> None:
    # Before: each turn got a fresh 64 MB limit, and what it wrote to the workdir on /dev/shm
    # stayed there, charged to no one: 5 turns of 20 MB held 100 MB for a 64 MB attempt.
    work_root = Path("/dev/shm")
    if not work_root.is_dir() or not os.access(work_root, os.W_OK):
        pytest.skip("no writable /dev/shm")
    turns = [f"turn {n}" for n in range(1, 6)]
    bench = write_benchmark(
        tmp_path / "bench",
        [
            {
                "id": "hoard",
                "stimulus": {"turns": turns},
                "checks": [{"type": "contains", "value": "kept"}],
                "limits": {"memory_mb": 64},
            }
        ],
    )
    agent = (
        'head -c 20971520 /dev/zero > "hoard-$BENCHYARD_TURN"; '
        'du -sm . | cut -f1; echo kept > "$BENCHYARD_OUTPUT_FILE"'
    )
    result = Cli(db_url, tmp_path)(
        "run", str(bench), "--agent-cmd", agent, "--sandbox", sandbox, "--work-root", str(work_root)
    )
    assert result.exit_code in (0, 1), result.output
    store = Store.open(db_url)
    try:
        [attempt] = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    finally:
        store.close()
    assert attempt.verdict == "failed"  # counted against the agent
    assert attempt.failure_kind == "resource_limit"
    assert "memory limit of 64 MB" in (attempt.cause or "")
    assert "files in RAM" in (attempt.cause or "")
