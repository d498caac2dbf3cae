"""`--network HOST:PORT,...` in the bwrap and docker sandboxes: the agent reaches the named loopback
server through the egress proxy (HTTPS_PROXY), and nothing else: not another loopback port, not
the store even when named, nothing by a direct connection. Real servers, a real sandbox."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from benchyard.bridge.egress import PROXY_PORT, serve_egress
from benchyard.providers.fake_server import FakeLLM
from benchyard.runner.store_address import store_endpoints
from benchyard.sandbox.network import Destination, Egress
from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

# What the agent tries: each target through the proxy (a tunnel, as pip's and curl's), then each
# directly; it answers what happened to each.
PROBE = """
import http.client, json, os, socket, sys
from urllib.parse import urlsplit
proxy = urlsplit(os.environ["HTTPS_PROXY"])
def tunnelled(port):
    connection = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=20)
    connection.set_tunnel("127.0.0.1", port)
    try:
        connection.request("GET", "/")
        return connection.getresponse().read().decode()
    except OSError as error:
        return "refused: " + str(error)
def direct(host, port):
    try:
        socket.create_connection((host, port), timeout=5).close()
        return "connected"
    except OSError as error:
        return "failed: " + str(error)
ports = [int(p) for p in sys.argv[1:]]
print(json.dumps({
    "env": {k: os.environ.get(k) for k in ("HTTPS_PROXY", "HTTP_PROXY", "BENCHYARD_NETWORK")},
    "tunnelled": [tunnelled(p) for p in ports],
    "direct": [direct("127.0.0.1", p) for p in ports] + [direct("1.1.1.1", 443)],
}))
"""


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"hello from {self.server.server_address[1]}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def _web_server(address: str) -> Iterator[int]:
    """A threaded HTTP server on `address` while the block runs: its port."""
    server = http.server.ThreadingHTTPServer((address, 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def web_servers() -> Iterator[tuple[int, int]]:
    """Two loopback HTTP servers of this host: the one named, and another."""
    with _web_server("127.0.0.1") as named, _web_server("127.0.0.1") as other:
        yield named, other


def _probe(
    cli: Cli, store: Store, tmp_path: Path, network: str, ports: list[int], sandbox: str = "bwrap"
) -> dict:
    agent = tmp_path / "agent" / "probe.py"
    agent.parent.mkdir()
    agent.write_text(PROBE, encoding="utf-8")
    bench = write_benchmark(tmp_path / "bench", [scenario("probe", "[]")])
    command = f"python3 {agent} {' '.join(map(str, ports))}"
    result = cli(
        "run", str(bench), "--agent-cmd", command, "--network", network, "--sandbox", sandbox,
        "--timeout", "120", "-q",
    )  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    run = store.resolve_run("latest")
    (attempt,) = store.attempts(run.id, with_evidence=True)
    assert attempt.answer, (attempt.cause, attempt.stderr)
    egress = [
        event.content
        for event in attempt.trajectory
        if event.data and event.data.get("source") == "egress"
    ]
    return {"settings": run.settings, "recorded": egress, **json.loads(attempt.answer)}


@pytest.mark.parametrize("sandbox", ["bwrap", "docker"])
def test_the_agent_reaches_the_named_server_through_the_proxy_and_nothing_else(
    cli: Cli, store: Store, tmp_path: Path, web_servers: tuple[int, int], sandbox: str
) -> None:
    named, other = web_servers
    seen = _probe(cli, store, tmp_path, f"127.0.0.1:{named}", [named, other, 5432], sandbox)
    assert seen["settings"]["network"] == f"127.0.0.1:{named}"
    assert (
        seen["env"]["HTTPS_PROXY"] == seen["env"]["HTTP_PROXY"] == f"http://127.0.0.1:{PROXY_PORT}"
    )
    assert seen["env"]["BENCHYARD_NETWORK"] == f"127.0.0.1:{named}"
    reached, elsewhere, store_port = seen["tunnelled"]
    assert reached == f"hello from {named}"
    assert elsewhere.startswith("refused: ") and "403" in elsewhere
    assert store_port.startswith("refused: ") and "403" in store_port
    assert all(outcome.startswith("failed: ") for outcome in seen["direct"]), seen["direct"]
    recorded = seen["recorded"]  # each connection in the trajectory
    assert len(recorded) == 3
    assert any(text.startswith(f"egress proxy: tunnel to 127.0.0.1:{named}: ") for text in recorded)
    for port in (other, 5432):
        assert any(f"refused (403): 127.0.0.1:{port} is not among" in text for text in recorded)


def test_the_destinations_are_shown_and_kept_by_rerun(
    cli: Cli, store: Store, tmp_path: Path, web_servers: tuple[int, int]
) -> None:
    named, _ = web_servers
    first = _probe(cli, store, tmp_path, f"127.0.0.1:{named}", [named])
    shown = cli("show", "latest")
    assert f"127.0.0.1:{named}" in shown.output
    again = cli("rerun", "latest", "--failed", "-q")  # the answer is no `[]`: it failed
    assert again.exit_code in (0, 1), again.output
    run = store.resolve_run("latest")
    assert run.settings["network"] == first["settings"]["network"] == f"127.0.0.1:{named}"
    (attempt,) = store.attempts(run.id, with_evidence=True)
    assert json.loads(attempt.answer or "{}")["tunnelled"] == [f"hello from {named}"]


@pytest.fixture
def host_address() -> str:
    """An address of this host other than loopback (its default route's), for a server there."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: only a route is chosen
        except OSError:
            pytest.skip("this host has no route beyond loopback")
        address = str(probe.getsockname()[0])
    if address.startswith("127."):
        pytest.skip("this host has no address beyond loopback")
    return address


def test_curl_finds_the_proxy_in_its_environment(
    cli: Cli, store: Store, tmp_path: Path, host_address: str
) -> None:
    """An ordinary client, told nothing but what the environment says: curl goes through
    HTTP_PROXY (a plain request forwarded, or a tunnel) to a server on this host's own address,
    and reaches it no other way."""
    with _web_server(host_address) as port:
        url = f"http://{host_address}:{port}/"
        command = (
            f"curl -sS --max-time 20 {url}; echo; "
            f"curl -sS --max-time 20 --proxytunnel {url}; echo; "
            f"curl -sS --max-time 5 --noproxy '*' {url} 2>&1 || echo direct failed"
        )
        bench = write_benchmark(tmp_path / "bench", [scenario("curl", "[]")])
        network = f"{host_address}:{port}"
        result = cli("run", str(bench), "--agent-cmd", command, "--network", network, "-q")
    assert result.exit_code in (0, 1), result.output
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    forwarded, tunnelled, *direct = (attempt.stdout or "").splitlines()
    assert forwarded == tunnelled == f"hello from {port}"
    assert direct[-1] == "direct failed" and "hello" not in "".join(direct)


BOTH = """
import os, urllib.request
models = urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/models",
    headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
)
print(urllib.request.urlopen(models, timeout=20).status)  # direct: NO_PROXY names loopback
print(urllib.request.urlopen(os.environ["TARGET"], timeout=20).read().decode())  # by HTTP_PROXY
"""


def test_the_bridge_and_the_proxy_serve_one_agent_together(
    cli: Cli, store: Store, tmp_path: Path, host_address: str
) -> None:
    """An agent with a model bridge under `--network HOST:PORT`: both relays run, one inside the
    other; urllib, configured by nothing but its environment, reaches the bridge directly
    (NO_PROXY) and the named server on this host's own address by the proxy."""
    agent = tmp_path / "agent" / "both.py"
    agent.parent.mkdir()
    agent.write_text(BOTH, encoding="utf-8")
    with _web_server(host_address) as port, FakeLLM() as llm:
        config = {
            "providers": {"fake": {"base_url": llm.url}},
            "agents": {
                "both": {
                    "kind": "command",
                    "command": f"python3 {agent}",
                    "env": {"TARGET": f"http://{host_address}:{port}/"},
                    "bridge": {"provider": "fake", "model": "m"},
                }
            },
        }
        (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        bench = write_benchmark(tmp_path / "bench", [scenario("both", "[]")])
        network = f"{host_address}:{port}"
        result = cli("run", str(bench), "--agent", "both", "--network", network, "-q")
    assert result.exit_code in (0, 1), result.output
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert (attempt.stdout or "").splitlines() == ["200", f"hello from {port}"], attempt.stderr


def test_naming_the_store_refuses_the_run(tmp_path: Path, postgres_url: str) -> None:
    """A PostgreSQL store on this host: `--network 127.0.0.1:5432` (or its name, localhost) would
    hand the agent the store, and the run is refused before anything runs."""
    cli = Cli(postgres_url, tmp_path)
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "ok")])
    for named in ("127.0.0.1:5432", "localhost:5432"):
        result = cli("run", str(bench), "--agent-cmd", "echo ok", "--network", named)
        assert result.exit_code == 2, result.output
        assert "reaches the store" in result.output


def test_the_proxy_refuses_the_store_even_when_named(tmp_path: Path) -> None:
    """Behind the run's refusal, the proxy itself: a named destination whose address is the
    store's (a name that resolves to it once the run has started) gets no tunnel."""
    with socket.create_server(("127.0.0.1", 0)) as fake_store:
        port = fake_store.getsockname()[1]
        store = store_endpoints(f"postgresql://root@127.0.0.1:{port}/test")
        egress = Egress((Destination("localhost", port), Destination("127.0.0.1", port)), store)
        for target in ("localhost", "127.0.0.1"):
            assert asyncio.run(_connect_through(egress, tmp_path, f"{target}:{port}")).startswith(
                b"HTTP/1.1 403"
            )


async def _connect_through(egress: Egress, io_dir: Path, target: str) -> bytes:
    async with serve_egress(egress, io_dir, [], own_network=False) as session:
        port = int(session.env["HTTPS_PROXY"].rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
        answer = await asyncio.wait_for(reader.read(4096), 30)
        writer.close()
        return answer
