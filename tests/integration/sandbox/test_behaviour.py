"""What a real bwrap sandbox and a real Docker engine do to misbehaving agents: network access
fails, writes outside the workdir fail, a fork bomb is contained, a memory hog is killed, 1 GB on
stdout is capped, a hang is killed at the timeout. Each run also holds a well-behaved scenario,
which must pass: the run goes on."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchyard.store.records import AttemptRecord
from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark

pytestmark = pytest.mark.store_in_passing  # the sandboxes; the store only records the verdicts

SANDBOXES = ["bwrap", "docker"]
CAP = 1024 * 1024

NETWORK_AGENT = """
import socket, sys
for host in sys.argv[2:]:
    with socket.create_connection((host, int(sys.argv[1])), timeout=2) as connection:
        print(connection.recv(100).decode())
"""
WRITE_AGENT = """
import os, sys
open("inside.txt", "w").write("fine")
for target in sys.argv[1:]:
    open(os.path.expanduser(target), "w").write("escaped")
print("escaped")
"""
FORK_BOMB = """
import os, time
while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.05)
"""
HANG = """
import os, time
os.fork()  # a child that hangs too: the whole tree must go at the timeout
time.sleep(600)
"""
MEMORY_HOG = """
hoard = []
while True:
    hoard.append("x" * 10_000_000)
"""


def _run(
    cli: Cli, store: Store, tmp_path: Path, sandbox: str, bad: dict[str, Any], agent: str
) -> dict[str, AttemptRecord]:
    """Run `bad` next to a scenario that must pass; the agent answers 'ok' to that one."""
    bench = write_benchmark(tmp_path / "bench", [bad, scenario("control", "ok")])
    command = f'if [ "$BENCHYARD_SCENARIO_ID" = control ]; then echo ok; else {agent}; fi'
    result = cli("run", str(bench), "--agent-cmd", command, "--sandbox", sandbox, "-j", "2", "-q")
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    assert run.status == "finished"
    assert run.settings["sandbox"] == sandbox
    attempts = {a.scenario_id: a for a in store.attempts(run.id, with_evidence=True)}
    assert attempts["control"].verdict == "passed", attempts["control"].cause
    return attempts


def _script(tmp_path: Path, source: str) -> str:
    path = tmp_path / f"agent-{uuid.uuid4().hex[:8]}.py"
    path.write_text(source, encoding="utf-8")
    return f"python3 {path}"


@pytest.fixture
def listener() -> Iterator[tuple[int, list[str]]]:
    """A TCP server on every host address that hands out a secret; yields (port, peers seen)."""
    server = socket.create_server(("0.0.0.0", 0))
    seen: list[str] = []

    def serve() -> None:
        while True:
            try:
                connection, peer = server.accept()
            except OSError:
                return
            seen.append(peer[0])
            connection.sendall(b"secret")
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], seen
    server.close()


def _host_addresses() -> list[str]:
    """Loopback and this host's other addresses (where a container's gateway would lead)."""
    found = subprocess.run(["hostname", "-I"], capture_output=True, text=True, check=False)
    return ["127.0.0.1", *found.stdout.split()[:2]]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_network_access_fails(
    sandbox: str, tmp_path: Path, cli: Cli, store: Store, listener: tuple[int, list[str]]
) -> None:
    port, seen = listener
    hosts = " ".join(_host_addresses())
    agent = f"{_script(tmp_path, NETWORK_AGENT)} {port} {hosts}"
    attempts = _run(cli, store, tmp_path, sandbox, scenario("net", "secret"), agent)
    assert attempts["net"].verdict == "failed"
    assert attempts["net"].failure_kind == "agent_crash"
    assert "unreachable" in (attempts["net"].cause or "") or "refused" in (
        attempts["net"].cause or ""
    )
    assert seen == []


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_writing_outside_the_workdir_fails(
    sandbox: str, tmp_path: Path, cli: Cli, store: Store
) -> None:
    name = f"benchyard-escape-{uuid.uuid4().hex[:8]}"
    # the system's directories are read-only; the host's home is not there in bwrap, and the
    # image's root-only one in docker (the agent's own HOME is a private directory of its attempt)
    targets = [f"/etc/{name}", f"/usr/{name}", str(Path.home() / name)]
    for target in targets:
        agent = f"{_script(tmp_path, WRITE_AGENT)} {target}"
        attempts = _run(cli, store, tmp_path, sandbox, scenario("escape", "escaped"), agent)
        assert attempts["escape"].verdict == "failed", target
        cause = attempts["escape"].cause or ""
        refused = ("Read-only file system", "No such file or directory", "Permission denied")
        assert any(reason in cause for reason in refused), target
    for target in targets:
        assert not Path(os.path.expanduser(target)).exists()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_the_benchmark_and_its_references_are_out_of_sight(
    sandbox: str, tmp_path: Path, cli: Cli, store: Store
) -> None:
    peek = "cat {}".format(tmp_path / "bench" / "scenarios" / "main.yaml")
    attempts = _run(cli, store, tmp_path, sandbox, scenario("peek", "x"), peek)
    assert attempts["peek"].verdict == "failed"
    assert "No such file or directory" in (attempts["peek"].cause or "")


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_fork_bomb_is_contained(sandbox: str, tmp_path: Path, cli: Cli, store: Store) -> None:
    marker = f"bomb-{uuid.uuid4().hex[:8]}"
    bomb = tmp_path / f"{marker}.py"
    bomb.write_text(FORK_BOMB, encoding="utf-8")
    bad = scenario("bomb", "x", limits={"timeout_sec": 3, "max_processes": 64})
    attempts = _run(cli, store, tmp_path, sandbox, bad, f"python3 {bomb}")
    assert attempts["bomb"].verdict == "timeout"
    if sandbox == "bwrap":  # docker does not say which limit a container ran into
        assert "process limit of 64 reached" in (attempts["bomb"].cause or "")
    assert _processes_running(marker) == 0


def _processes_running(marker: str) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        try:
            count += marker in (entry / "cmdline").read_text(errors="replace")
        except OSError:
            continue
    return count


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_memory_hog_is_killed(sandbox: str, tmp_path: Path, cli: Cli, store: Store) -> None:
    bad = scenario("hog", "x", limits={"memory_mb": 128})
    attempts = _run(cli, store, tmp_path, sandbox, bad, _script(tmp_path, MEMORY_HOG))
    assert attempts["hog"].verdict == "failed"
    assert attempts["hog"].failure_kind == "resource_limit"
    assert "memory limit of 128 MB reached" in (attempts["hog"].cause or "")


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_gigabyte_on_stdout_is_capped(
    sandbox: str, tmp_path: Path, cli: Cli, store: Store
) -> None:
    flood = "head -c 1000000000 /dev/zero"
    attempts = _run(cli, store, tmp_path, sandbox, scenario("flood", "x"), flood)
    assert attempts["flood"].verdict == "failed"
    assert len(attempts["flood"].stdout or "") == CAP
    assert attempts["flood"].stdout_dropped_bytes == 1_000_000_000 - CAP


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_hang_is_killed_at_the_timeout(
    sandbox: str, tmp_path: Path, cli: Cli, store: Store
) -> None:
    """What must hold however loaded the machine: the verdict is timeout, the attempt was not cut
    short, and the whole process tree is gone. How soon it is killed is measured in bench/."""
    timeout = 3.0
    marker = f"hang-{uuid.uuid4().hex[:8]}"
    hang = tmp_path / f"{marker}.py"
    hang.write_text(HANG, encoding="utf-8")
    bad = scenario("hang", "x", limits={"timeout_sec": timeout})
    attempts = _run(cli, store, tmp_path, sandbox, bad, f"python3 {hang}")
    assert attempts["hang"].verdict == "timeout"
    assert attempts["hang"].duration_sec >= timeout
    assert _processes_running(marker) == 0


def test_allow_network_gives_agent_commands_the_network(
    tmp_path: Path, listener: tuple[int, list[str]]
) -> None:
    # a SQLite store: bwrap refuses the network where it would reach a store on loopback
    store = Store.open(f"sqlite:///{tmp_path / 'net.db'}")
    cli = Cli(store.url, tmp_path)
    port, seen = listener
    bench = write_benchmark(tmp_path / "bench", [scenario("net", "secret")])
    agent = f"{_script(tmp_path, NETWORK_AGENT)} {port} 127.0.0.1"
    result = cli("run", str(bench), "--agent-cmd", agent, "--allow-network", "-q")
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    assert run.settings["allow_network"] is True
    assert [a.verdict for a in store.attempts(run.id)] == ["passed"]
    assert seen == ["127.0.0.1"]
