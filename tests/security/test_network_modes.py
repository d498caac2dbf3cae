"""What an agent command reaches on loopback under each --network mode, in the default bwrap
sandbox: under `none` nothing, under `bridge` only its model bridge's relay; never the store's
PostgreSQL port (5432) nor any port the host listens on (here the fake model server's). The agent
tries every TCP port of 127.0.0.1 and answers the list of those where something listened."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from benchyard.bridge.server import RELAY_PORT
from benchyard.providers.fake_server import FakeLLM
from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

SCAN = """
import json, socket
reached = []
for port in range(1, 65536):
    probe = socket.socket()
    probe.settimeout(1)
    if probe.connect_ex(("127.0.0.1", port)) == 0 and probe.getsockname() != probe.getpeername():
        reached.append(port)  # (a connection to itself is TCP's simultaneous open, no listener)
    probe.close()
print(json.dumps(reached))
"""


@pytest.fixture
def host_listener() -> Iterator[int]:
    """A port this host listens on, as any service of the host does."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield int(listener.getsockname()[1])


def _scan(cli: Cli, store: Store, tmp_path: Path, llm: FakeLLM, *args: str) -> list[int]:
    agent = tmp_path / "agent" / "scan.py"
    agent.parent.mkdir()
    agent.write_text(SCAN, encoding="utf-8")
    config = {
        "providers": {"fake": {"base_url": llm.url}},
        "agents": {
            "scanner": {
                "kind": "command",
                "command": f"python3 {agent}",
                "bridge": {"provider": "fake", "model": "m"},
            }
        },
    }
    (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    bench = write_benchmark(tmp_path / "bench", [scenario("scan", "[]")])
    result = cli("run", str(bench), "--agent", "scanner", "--timeout", "300", "-q", *args)
    assert result.exit_code in (0, 1), result.output
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert attempt.answer, (attempt.cause, attempt.stderr)
    reached: list[int] = json.loads(attempt.answer)
    return reached


def test_under_network_none_no_loopback_port_is_reached(
    cli: Cli, store: Store, tmp_path: Path, host_listener: int
) -> None:
    with FakeLLM() as llm:
        reached = _scan(cli, store, tmp_path, llm, "--network", "none")
    assert reached == []


def test_under_network_bridge_only_the_bridge_is_reached(
    cli: Cli, store: Store, tmp_path: Path, host_listener: int
) -> None:
    with FakeLLM() as llm:
        reached = _scan(cli, store, tmp_path, llm)  # bridge: the default
        fake_port = llm.server.port
    assert reached == [RELAY_PORT]
    assert 5432 not in reached and host_listener not in reached and fake_port not in reached


def test_allow_network_is_network_all_and_says_what_it_opens(cli: Cli, tmp_path: Path) -> None:
    """(A SQLite store: with a PostgreSQL server on this host, `all` is refused in bwrap, as
    tests/security/test_isolation.py shows.)"""
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "ok")])
    sqlite = ("--db", f"sqlite:///{tmp_path / 'own.db'}")
    result = cli("run", str(bench), "--agent-cmd", "echo ok", "--allow-network", *sqlite, db=False)
    assert result.exit_code == 0, result.output
    assert "--network all" in result.output and "loopback included" in result.output
    assert "--network HOST:PORT,..." in result.output  # the narrower choice, named
    own = Store.open(sqlite[1])
    try:
        assert own.resolve_run("latest").settings["network"] == "all"
    finally:
        own.close()
    refused = cli(
        "run", str(bench), "--agent-cmd", "echo ok", "--allow-network", "--network", "none"
    )
    assert refused.exit_code == 2
    assert "--allow-network means --network all" in refused.output
