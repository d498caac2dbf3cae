"""What the client does to the figures, and what `speed` and `status` exit with (issue 22, item
10): a stall of this client's event loop during a call is seen by a ticker task and the call taken
again; the concurrency sweep says where throughput stops rising; implausible figures exit 1 and an
unreachable endpoint exits 3. Real HTTP to benchyard's fake server on loopback; the stall is 800 ms
against 20 ms chunks, so that no loaded machine can be mistaken for it."""

from __future__ import annotations

import asyncio
import socket
import time
from pathlib import Path

import pytest
import yaml

from benchyard.speed.api import resolve_speed_agent
from benchyard.speed.measure import Measurer, measuring_config
from benchyard.speed.models import Sample, SpeedOptions
from benchyard.speed.plausibility import stalled
from tests.integration.speed.conftest import FEW, WORDS, Measure, StartFake, project
from tests.support import Cli

pytestmark = pytest.mark.store_in_passing  # the client's own figures; the store only records them

STALL_SEC = 0.8


def test_a_client_stall_during_a_call_is_seen_and_the_call_taken_again(
    fake_llm: StartFake,
) -> None:
    """The server streams 24 chunks 20 ms apart, on time; this process blocks its own event loop
    for 800 ms in the middle of the third measured call (time.sleep in a task). The chunks arrive
    late by the stall; the ticker sees it, the take is thrown away and the call made again."""
    llm = fake_llm({"default": {"content": WORDS, "delay_sec": 0.05, "chunk_delay_sec": 0.02}})
    options = SpeedOptions.model_validate({**FEW, "concurrency": [1], "warmup": 0})
    config = measuring_config(resolve_speed_agent(project(llm.url), "model").config, options)
    kept: list[Sample] = []

    async def main() -> None:
        measurer = Measurer(config, options, kept.extend)

        async def stall_once() -> None:
            while len(llm.requests) < 3:  # the third call is in flight
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.15)  # a few chunks in
            time.sleep(STALL_SEC)  # the client's loop blocked: nothing read, nothing timed

        staller = asyncio.ensure_future(stall_once())
        try:
            await measurer.run()
        finally:
            staller.cancel()
            await measurer.aclose()

    asyncio.run(main())

    assert any(s.retakes for s in kept if s.phase == "length")  # the third call, at least
    assert len(llm.requests) > len(kept)  # the stalled take was sent, and thrown away
    assert all(not stalled(s) for s in kept)  # what is kept was timed without a stall
    assert all((s.client_lag_sec or 0.0) < STALL_SEC / 2 for s in kept)


def test_saturation_is_where_throughput_stops_rising(fake_llm: StartFake, measure: Measure) -> None:
    """A server that decodes at most 2 requests at once: throughput doubles from 1 to 2 in flight,
    then stays put at 4 and 8."""
    llm = fake_llm({"default": {"content": WORDS, "chunk_delay_sec": 0.02}, "max_batch": 2})
    _, report = measure(llm.url, concurrency=[1, 2, 4, 8])

    assert report.saturation is not None
    assert report.saturation.concurrency == 2
    assert report.saturation.next_concurrency == 4


def test_without_a_batch_limit_saturation_is_not_reached(
    fake_llm: StartFake, measure: Measure
) -> None:
    llm = fake_llm({"default": {"content": WORDS, "chunk_delay_sec": 0.02}})
    _, report = measure(llm.url, concurrency=[1, 4])
    assert report.saturation is not None and report.saturation.concurrency is None


SPEED = (
    "speed", "--agent", "model", "--lengths", "short=20,long=60", "--repeats", "2",
    "--warmup", "0", "--concurrency", "1,2", "--rounds", "1",
)  # fmt: skip


def _project(root: Path, url: str) -> None:
    config = {
        "providers": {"fake": {"base_url": url, "max_retries": 0, "retry_backoff_sec": 0.01}},
        "agents": {"model": {"kind": "openai", "provider": "fake", "model": "fake"}},
    }
    (root / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_speed_exits_1_on_implausible_figures(fake_llm: StartFake, cli: Cli) -> None:
    llm = fake_llm({"default": {"content": WORDS, "completion_tokens": 72, "delay_sec": 0.05}})
    _project(cli.cwd, llm.url)
    result = cli(*SPEED)
    assert result.exit_code == 1, result.output
    assert "implausible figures (" in result.output and "usage_outside_bounds" in result.output
    assert "saturation" in result.output  # the sweep's line, in the table

    honest = fake_llm({"default": {"content": WORDS, "delay_sec": 0.05}})
    _project(cli.cwd, honest.url)
    assert cli(*SPEED, "-q").exit_code == 0


def test_speed_and_status_exit_3_when_the_endpoint_is_unreachable(cli: Cli) -> None:
    _project(cli.cwd, f"http://127.0.0.1:{_closed_port()}/v1")
    result = cli(*SPEED, "-q")
    assert result.exit_code == 3, result.output
    assert "no measured call reached the endpoint" in result.output

    status = cli("status", "--timeout", "2", db=False)
    assert status.exit_code == 3, status.output
    assert "DOWN" in status.output and "unreachable: provider fake" in status.output
