"""What an endpoint says about itself, asked over real HTTP: its models, the size of a model's
weights (llama.cpp's `meta.size`, or the file its `/props` names), and the round trip."""

from __future__ import annotations

import asyncio
from pathlib import Path

from benchyard.providers.config import ProviderConfig
from benchyard.providers.endpoint import look, model_file_size, round_trip_sec, server_root
from tests.integration.speed.conftest import StartFake


def test_the_size_of_the_file_props_names(fake_llm: StartFake, tmp_path: Path) -> None:
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"\0" * 12345)
    llm = fake_llm({"props": {"model_path": str(weights), "total_slots": 1}})
    provider = ProviderConfig(base_url=llm.url)

    found = asyncio.run(model_file_size(provider, "fake"))

    assert found == (12345, f"the file {weights} named by the endpoint's /props")


def test_no_size_where_the_endpoint_tells_none(fake_llm: StartFake) -> None:
    llm = fake_llm({})
    assert asyncio.run(model_file_size(ProviderConfig(base_url=llm.url), "fake")) is None


def test_models_and_round_trip(fake_llm: StartFake) -> None:
    llm = fake_llm(
        {"models": [{"id": "a", "meta": {"size": 7}}, {"id": "b"}], "probe_delay_sec": 0.2}
    )
    provider = ProviderConfig(base_url=llm.url)

    state = asyncio.run(look(provider))
    assert state.up and state.models == ["a", "b"] and state.model_meta == {"a": {"size": 7}}
    rtt = asyncio.run(round_trip_sec(provider, samples=2))
    assert rtt is not None and rtt >= 0.2
    assert asyncio.run(model_file_size(provider, "a")) == (
        7,
        "the endpoint's /v1/models (meta.size)",
    )


def test_server_root() -> None:
    assert server_root("http://h:8080/v1") == "http://h:8080"
    assert server_root("http://h:8080/v1/") == "http://h:8080"
    assert server_root("https://openrouter.ai/api/v1") == "https://openrouter.ai/api"
