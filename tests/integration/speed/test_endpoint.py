"""What an endpoint says about itself, asked over real HTTP: its models, the size of a model's
weights (llama.cpp's `meta.size`, or the file its `/props` names), and the round trip."""

from __future__ import annotations

import asyncio
from pathlib import Path

from benchyard.providers.config import ProviderConfig
from benchyard.providers.endpoint import look, model_file_size, round_trip_sec
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


def _provider(base_url: str) -> ProviderConfig:
    return ProviderConfig(base_url=base_url)


def test_urls_below_the_base_url_and_its_root_keep_its_query() -> None:
    assert _provider("http://h:8080/v1").url_for("props", at_root=True) == "http://h:8080/props"
    assert _provider("http://h:8080/v1/").url_for("/props", at_root=True) == "http://h:8080/props"
    openrouter = _provider("https://openrouter.ai/api/v1")
    assert openrouter.url_for("tokenize", at_root=True) == "https://openrouter.ai/api/tokenize"
    azure = _provider("https://u:p@x.example/openai/v1?api-version=2025-01&key=k")
    assert azure.url_for("/responses") == (
        "https://u:p@x.example/openai/v1/responses?api-version=2025-01&key=k"
    )
    assert azure.endpoint() == ("https://u:p@x.example/openai/v1/", "api-version=2025-01&key=k")
    assert _provider("http://h/v1/").endpoint() == ("http://h/v1/", "")
