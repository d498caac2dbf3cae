"""The provider client's overhead: 200 concurrent streamed chat requests against benchyard's fake
OpenAI-compatible server (a separate process) whose every reply waits a fixed scripted delay.

For each request, the latency the harness adds is the measured latency minus the scripted delay;
the CPU time is this process's, over the whole batch. The baseline, measured in the same run, is
bare httpx streaming the same requests through one client (one pool of 200 connections) and
reading every line, with no parsing or recording. benchyard spreads its request slots over pools
of at most 32 connections (httpcore's pool does work in proportion to its size per request).
Run: .venv/bin/python bench/provider.py
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from common import BENCHYARD

REQUESTS = 200
DELAY_SEC = 1.0
WORDS = 20  # one streamed chunk per word
ROUNDS = 3
MESSAGES = [{"role": "user", "content": "Tell me a story."}]


def start_server(scratch: Path) -> tuple[subprocess.Popen[str], str]:
    script = scratch / "replies.yaml"
    content = " ".join(f"word{i}" for i in range(WORDS))
    script.write_text(f"default:\n  content: {content}\n  delay_sec: {DELAY_SEC}\n")
    server = subprocess.Popen(
        [*BENCHYARD, "fake-llm", "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().split(" at ")[1].strip()
    return server, url


async def batch(one: Callable[[], Awaitable[None]]) -> tuple[list[float], float]:
    """Latency of each of REQUESTS concurrent calls, and the CPU seconds of the whole batch."""

    async def timed() -> float:
        started = time.perf_counter()
        await one()
        return time.perf_counter() - started

    cpu = time.process_time()
    latencies = await asyncio.gather(*(timed() for _ in range(REQUESTS)))
    return list(latencies), time.process_time() - cpu


async def measure(url: str) -> dict[str, tuple[list[float], float]]:
    import httpx

    from benchyard.providers.client import ProviderClient
    from benchyard.providers.config import ModelConfig
    from benchyard.runner.trajectory import Event

    body = {"model": "m", "messages": MESSAGES, "stream": True}
    limits = httpx.Limits(max_connections=REQUESTS, max_keepalive_connections=REQUESTS)
    raw_client = httpx.AsyncClient(limits=limits, timeout=60)
    provider = {"base_url": url, "max_concurrent": REQUESTS, "max_retries": 0}
    harness = ProviderClient(ModelConfig(provider=provider, model="m", stream=True))

    async def raw() -> None:
        async with raw_client.stream("POST", url + "/chat/completions", json=body) as response:
            async for _ in response.aiter_lines():
                pass

    async def benchyard() -> None:
        sink: list[Event] = []
        reply = await harness.chat(MESSAGES, sink)
        sink.append(reply.to_event())
        assert len(reply.content.split()) == WORDS

    results: dict[str, tuple[list[float], float]] = {}
    try:
        for name, one in (("raw httpx", raw), ("benchyard", benchyard)):
            await batch(one)  # warm the connections up
            rounds = [await batch(one) for _ in range(ROUNDS)]
            results[name] = min(rounds, key=lambda r: statistics.median(r[0]))
    finally:
        await raw_client.aclose()
        await harness.aclose()
    return results


def main() -> None:
    # bench/ is first on sys.path, and bench/queue.py would stand in for the standard library's
    # queue module that httpx's asyncio backend imports.
    here = Path(__file__).resolve().parent
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != here]
    with tempfile.TemporaryDirectory() as scratch:
        server, url = start_server(Path(scratch))
        try:
            results = asyncio.run(measure(url))
        finally:
            server.terminate()
            server.wait()
    print(
        f"{REQUESTS} concurrent streamed requests, scripted delay {DELAY_SEC:g} s, "
        f"{WORDS} chunks each (best of {ROUNDS} rounds)"
    )
    print(f"{'':12} added latency per request p50 / p90 / max      CPU per request")
    summary = {}
    for name, (latencies, cpu) in results.items():
        added = sorted(latency - DELAY_SEC for latency in latencies)
        p50, p90 = statistics.median(added), added[int(0.9 * len(added))]
        summary[name] = (p50, cpu / REQUESTS)
        print(
            f"{name:12} {p50 * 1e3:8.1f} / {p90 * 1e3:6.1f} / {added[-1] * 1e3:6.1f} ms"
            f"{cpu / REQUESTS * 1e3:22.2f} ms"
        )
    (raw_p50, raw_cpu), (ours_p50, ours_cpu) = summary["raw httpx"], summary["benchyard"]
    print(
        f"ratios benchyard / raw httpx: added latency p50 {ours_p50 / raw_p50:.2f}, "
        f"CPU {ours_cpu / raw_cpu:.2f}; "
        f"benchyard's added latency is {ours_p50 / DELAY_SEC:.1%} of the scripted delay"
    )


if __name__ == "__main__":
    sys.exit(main())
