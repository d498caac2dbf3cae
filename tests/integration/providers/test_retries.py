"""Every retry path of the provider client over real HTTP: 429 with Retry-After, 5xx, a reset
connection, a truncated stream and a truncated whole reply; retries are infrastructure events,
recorded in the trajectory and never counted against the agent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from benchyard.providers.client import ProviderClient
from benchyard.providers.config import ModelConfig
from benchyard.providers.replies import ChatReply
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import Event
from benchyard.store.store import Store
from tests.integration.providers.conftest import FAST_RETRIES, StartFake, write_project
from tests.support import Cli, write_benchmark

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def client(url: str, *, stream: bool = True, **provider: Any) -> ProviderClient:
    config = {"base_url": url, **FAST_RETRIES, **provider}
    return ProviderClient(ModelConfig(provider=config, model="agent-model", stream=stream))


def chat(provider: ProviderClient, sink: list[Event]) -> ChatReply:
    async def call() -> ChatReply:
        try:
            return await provider.chat(QUESTION, sink)
        finally:
            await provider.aclose()

    return asyncio.run(call())


def faulty_then_paris(fault: dict[str, Any], times: int = 2) -> dict[str, Any]:
    return {"replies": [{"match": "capital", "times": times, **fault}, {"content": "Paris."}]}


FAULTS = {
    "429 with Retry-After": {"status": 429, "retry_after_sec": 0.05},
    "500": {"status": 500},
    "503": {"status": 503},
    "connection reset": {"fault": "reset"},
    "truncated stream": {"fault": "truncate"},
}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_each_fault_is_retried_and_recorded(fake_llm: StartFake, fault: str, stream: bool) -> None:
    llm = fake_llm(faulty_then_paris(FAULTS[fault]))
    sink: list[Event] = []
    reply = chat(client(llm.url, stream=stream), sink)
    assert reply.content == "Paris."
    assert len(llm.requests) == 3
    retries = [event for event in sink if (event.data or {}).get("source") == "provider"]
    assert [event.data["retry"] for event in retries if event.data] == [1, 2]
    assert all(event.data and event.data["infrastructure"] for event in retries)
    assert reply.tokens_in and reply.tokens_out


def test_retry_after_is_honoured_over_the_backoff(fake_llm: StartFake) -> None:
    llm = fake_llm(faulty_then_paris({"status": 429, "retry_after_sec": 0.3}, times=1))
    sink: list[Event] = []
    chat(client(llm.url, retry_backoff_sec=5.0), sink)
    assert sink[0].data is not None
    assert sink[0].data["delay_sec"] == 0.3
    assert sink[0].data["status"] == 429
    assert "HTTP 429" in sink[0].content


def test_a_long_retry_after_is_capped(fake_llm: StartFake) -> None:
    llm = fake_llm(faulty_then_paris({"status": 429, "retry_after_sec": 3600}, times=1))
    sink: list[Event] = []
    chat(client(llm.url, max_retry_after_sec=0.05), sink)
    assert sink[0].data is not None and sink[0].data["delay_sec"] == 0.05


def test_a_fault_that_persists_fails_as_provider_unavailable(fake_llm: StartFake) -> None:
    llm = fake_llm({"replies": [{"status": 502}]})
    sink: list[Event] = []
    with pytest.raises(AttemptFailure) as failure:
        chat(client(llm.url, max_retries=2), sink)
    assert failure.value.kind == FailureKind.PROVIDER_UNAVAILABLE
    assert failure.value.policy.retry and not failure.value.policy.counts
    assert "gave up after 2 retries" in failure.value.message
    assert len(llm.requests) == 3 and len(sink) == 2


def test_a_refused_request_is_not_retried(fake_llm: StartFake) -> None:
    llm = fake_llm({"replies": [{"status": 400, "content": "unknown field"}]})
    with pytest.raises(AttemptFailure) as failure:
        chat(client(llm.url), [])
    assert failure.value.kind == FailureKind.PROVIDER_REJECTED
    assert "HTTP 400" in failure.value.message and "unknown field" in failure.value.message
    assert len(llm.requests) == 1


def test_the_api_key_comes_from_the_named_variable(
    fake_llm: StartFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = fake_llm({})
    with pytest.raises(AttemptFailure) as failure:
        chat(client(llm.url, api_key_env="BENCHYARD_TEST_KEY"), [])
    assert failure.value.kind == FailureKind.PROVIDER_REJECTED
    assert "BENCHYARD_TEST_KEY" in failure.value.message
    monkeypatch.setenv("BENCHYARD_TEST_KEY", "sk-test")
    assert chat(client(llm.url, api_key_env="BENCHYARD_TEST_KEY"), []).content == "OK"


FLAKY_RUN = {
    "replies": [
        {"match": "capital", "status": 429, "retry_after_sec": 0.01, "times": 2},
        {"match": "capital", "fault": "truncate", "times": 1},
        {"match": "capital", "content": "Paris."},
        {"match": "broken", "status": 500},
    ]
}


def test_retries_in_a_run_are_not_failures(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    llm = fake_llm(FLAKY_RUN)
    write_project(cli.cwd, llm.url)
    capital = {
        "id": "capital",
        "stimulus": "What is the capital of France?",
        "checks": [{"type": "contains", "value": "Paris"}],
    }
    broken = {
        "id": "broken",
        "stimulus": "broken endpoint",
        "checks": [{"type": "contains", "value": "x"}],
    }
    bench = write_benchmark(tmp_path / "bench", [capital, broken])
    result = cli(
        "run", str(bench), "--agent", "model", "--retries", "1", "--retry-backoff", "0.01", "-q"
    )
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    tries = store.attempts(run.id, include_superseded=True, with_evidence=True)
    by_scenario = {(t.scenario_id, t.try_number): t for t in tries}
    passed = by_scenario[("capital", 1)]
    assert (passed.verdict, passed.superseded) == ("passed", False)
    retry_events = [
        e for e in passed.trajectory or [] if (e.data or {}).get("source") == "provider"
    ]
    assert len(retry_events) == 3
    assert "truncated" in retry_events[2].content
    down = [by_scenario[("broken", n)] for n in (1, 2)]
    assert [(t.verdict, t.failure_kind, t.superseded) for t in down] == [
        ("error", "provider_unavailable", True),
        ("error", "provider_unavailable", False),
    ]
    summary = json.loads(cli("report", "latest", "--format", "json").output)["summary"]
    assert (summary["passed"], summary["failed"], summary["errors"]) == (1, 0, 1)
    assert summary["accuracy"] == 1.0


def test_nothing_listening_is_a_retried_connection_error() -> None:
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sink: list[Event] = []
    with pytest.raises(AttemptFailure) as failure:
        chat(client(f"http://127.0.0.1:{port}/v1", max_retries=1), sink)
    assert failure.value.kind == FailureKind.PROVIDER_UNAVAILABLE
    assert "connection error (ConnectError" in failure.value.message
    assert len(sink) == 1 and sink[0].data and sink[0].data["status"] is None
