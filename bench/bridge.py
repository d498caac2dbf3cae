"""The model bridge's cost (issue 21): what it adds to each model call, and to each attempt.

Per call: benchyard's fake OpenAI-compatible server (a separate process) answers every request at
once. The same non-streamed chat request is sent, in turn, directly to it and through the bridge
(the bridge serving in a thread of its own, on a Unix socket, and the real relay script run by
/usr/bin/python3 listening on a loopback port, as in a sandbox): the added latency is each bridged
call's time less the direct call measured next to it. The bridge calls the provider streamed (to
measure its TTFT) and answers once the reply is whole, so the agent's own time to first byte is
the bridged latency.

Per attempt: `benchyard run` of ATTEMPTS trivial scenarios (-j 1, default bwrap sandbox), the
agent a command that makes no model call, declared with and without a bridge; the added cost per
attempt is the difference of the two runs' wall times over ATTEMPTS.

Run: .venv/bin/python bench/bridge.py
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.append(sys.path.pop(0))  # this file's directory last: `queue` must stay the stdlib's

import httpx
import yaml
from common import BENCHYARD, interleaved, spread, trivial_benchmark

from benchyard.bridge.server import RELAY_PYTHON, SOCKET_NAME, Bridge, serve_bridge
from benchyard.providers.client import ProviderClient
from benchyard.providers.config import ModelConfig, ProviderConfig

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 200
ATTEMPTS = 10
RUN_REPEATS = 3
BODY = {"model": "m", "messages": [{"role": "user", "content": "Tell me a story."}]}


def start_fake(scratch: Path) -> tuple[subprocess.Popen[str], str]:
    script = scratch / "replies.yaml"
    script.write_text("default:\n  content: once upon a time there was a bench\n")
    server = subprocess.Popen(
        [*BENCHYARD, "fake-llm", "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    return server, server.stdout.readline().split(" at ")[1].strip()


def free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return int(probe.getsockname()[1])


class BridgeThread:
    """A bridge served from a loop of its own, reached through the relay on a loopback port."""

    def __init__(self, url: str, io_dir: Path) -> None:
        config = ModelConfig(provider=ProviderConfig(base_url=url), model="m")
        self.bridge = Bridge(ProviderClient(config, "bridge"), [], max_calls=10**9)
        self.io_dir = io_dir
        self.ready = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.relay: subprocess.Popen[bytes] | None = None
        self.port = free_port()
        threading.Thread(target=self._serve, daemon=True).start()
        self.ready.wait()
        self._wait_for_relay()

    def _serve(self) -> None:
        async def serve() -> None:
            async with serve_bridge(self.bridge, self.io_dir, own_network=True) as session:
                argv = [*session.relay[:3], str(self.port), "--", "/bin/sleep", "3600"]
                self.relay = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
                self.stop = asyncio.Event()
                self.ready.set()
                await self.stop.wait()

        self.loop.run_until_complete(serve())

    def _wait_for_relay(self) -> None:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the relay did not listen")

    def close(self) -> None:
        if self.relay is not None:
            self.relay.terminate()  # the relay passes it on to its command, then ends
            self.relay.wait()
        self.loop.call_soon_threadsafe(self.stop.set)


def per_call(url: str, scratch: Path) -> None:
    served = BridgeThread(url, scratch)
    bridged_url = f"http://127.0.0.1:{served.port}/v1/chat/completions"
    auth = {"Authorization": f"Bearer {served.bridge.token}"}
    with httpx.Client(timeout=30) as client:

        def direct() -> float:
            started = time.perf_counter()
            client.post(f"{url}/chat/completions", json=BODY).raise_for_status()
            return time.perf_counter() - started

        def bridged() -> float:
            started = time.perf_counter()
            client.post(bridged_url, json=BODY, headers=auth).raise_for_status()
            return time.perf_counter() - started

        for _ in range(10):  # warm both paths (connections, imports)
            direct(), bridged()
        try:
            values = interleaved({"direct": direct, "bridged": bridged}, repeats=CALLS)
        finally:
            served.close()
    added = [(b - d) * 1000 for b, d in zip(values["bridged"], values["direct"], strict=True)]
    ratio = [b / d for b, d in zip(values["bridged"], values["direct"], strict=True)]
    quartiles = statistics.quantiles(added, n=4)
    print(f"per call, {CALLS} interleaved pairs (non-streamed, the reply at once):")
    print(f"  direct latency ms:   {spread([v * 1000 for v in values['direct']])}")
    print(f"  bridged latency ms:  {spread([v * 1000 for v in values['bridged']])}")
    print(
        f"  added ms: median {statistics.median(added):.2f} "
        f"(IQR {quartiles[0]:.2f}-{quartiles[2]:.2f}); bridged/direct ratio {spread(ratio)}"
    )


def per_attempt(url: str, scratch: Path) -> None:
    agent = scratch / "agent" / "answer.sh"
    agent.parent.mkdir()
    agent.write_text('sed "s/say //" "$BENCHYARD_INSTRUCTION_FILE"\n')
    bench = trivial_benchmark(scratch / "bench", ATTEMPTS)
    base = {"kind": "command", "command": f"sh {agent}"}
    bridge = {"provider": "fake", "model": "m"}
    config = {
        "providers": {"fake": {"base_url": url}},
        "agents": {"plain": base, "bridged": {**base, "bridge": bridge}},
    }
    (scratch / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    db = f"sqlite:///{scratch / 'store.db'}"

    def run(name: str) -> float:
        started = time.perf_counter()
        command = [*BENCHYARD, "run", str(bench), "--agent", name, "-j", "1", "-q", "--db", db]
        subprocess.run(command, check=True, cwd=scratch, stdout=subprocess.DEVNULL)
        return time.perf_counter() - started

    run("plain")  # compile and warm
    values = interleaved(
        {"plain": lambda: run("plain"), "bridged": lambda: run("bridged")}, repeats=RUN_REPEATS
    )
    added = [
        (b - p) / ATTEMPTS * 1000 for b, p in zip(values["bridged"], values["plain"], strict=True)
    ]
    ratio = [b / p for b, p in zip(values["bridged"], values["plain"], strict=True)]
    print(f"per attempt, runs of {ATTEMPTS} bwrap attempts, {RUN_REPEATS} interleaved pairs:")
    print(f"  run without a bridge s: {spread(values['plain'])}")
    print(f"  run with a bridge s:    {spread(values['bridged'])}")
    print(f"  added ms per attempt: {spread(added)}; with/without ratio {spread(ratio)}")


def main() -> None:
    if not Path(RELAY_PYTHON).exists():
        sys.exit(f"{RELAY_PYTHON} is needed to run the relay")
    with tempfile.TemporaryDirectory(prefix="bench-bridge-", dir="/dev/shm") as tmp:
        scratch = Path(tmp)
        server, url = start_fake(scratch)
        try:
            assert len(str(scratch / SOCKET_NAME)) < 100
            per_call(url, scratch)
            per_attempt(url, scratch)
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
