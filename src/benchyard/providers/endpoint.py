"""What an OpenAI-compatible endpoint says about itself, asked without a chat request: the models
it serves (`GET /v1/models`), llama.cpp's `GET /props`, the size of a model's file where the
server reports it, and the network round trip. Used by `benchyard status` and `benchyard speed`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchyard import secrets
from benchyard.providers.config import (
    ProviderConfig,
    ProviderConfigError,
    register_provider_secrets,
)
from benchyard.providers.fake_script import load_script

PROBE_TIMEOUT_SEC = 5.0


@dataclass
class EndpointState:
    """One look at an endpoint: up or not (and why), and the models it lists."""

    base_url: str
    up: bool
    models: list[str] = field(default_factory=list)
    model_meta: dict[str, dict[str, Any]] = field(default_factory=dict)  # by id, where given
    latency_sec: float | None = None
    problem: str | None = None


def _scripted(script: str) -> EndpointState:
    """A provider of canned replies, which the model bridge serves in benchyard's own process:
    up (its script was read when the provider was), with the models its script lists."""
    listed = load_script(Path(script)).models
    return EndpointState(f"script {script}", up=True, models=[str(m.get("id")) for m in listed])


def request_headers(provider: ProviderConfig) -> dict[str, str]:
    """The headers every request to `provider` carries, its key included (read now)."""
    headers = {**provider.headers, **provider.environment_headers()}
    if provider.api_key_env:
        key = os.environ.get(provider.api_key_env)
        if not key:
            raise ProviderConfigError(
                f"the environment variable {provider.api_key_env} (api_key_env) is not set"
            )
        headers["Authorization"] = f"Bearer {key}"
    return headers


def _client(provider: ProviderConfig, timeout_sec: float) -> Any:
    import httpx

    base_url, params = provider.endpoint()
    return httpx.AsyncClient(
        base_url=base_url,
        params=params,
        headers=request_headers(provider),
        timeout=httpx.Timeout(timeout_sec),
    )


async def look(provider: ProviderConfig, timeout_sec: float = PROBE_TIMEOUT_SEC) -> EndpointState:
    """GET /v1/models: whether the endpoint answers, and what it serves."""
    import httpx

    if provider.script is not None:
        return _scripted(provider.script)
    register_provider_secrets(provider)  # an error echoing them is scrubbed
    state = EndpointState(provider.shown_url(), up=False)
    try:
        async with _client(provider, timeout_sec) as http:
            started = time.perf_counter()
            response = await http.get("models")
            state.latency_sec = time.perf_counter() - started
    except ProviderConfigError as error:
        state.problem = str(error)
        return state
    except httpx.HTTPError as error:
        state.problem = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        state.problem = secrets.scrub(state.problem)
        return state
    if response.status_code >= 400:
        excerpt = secrets.scrub(" ".join(response.text.split()))[:160]
        state.problem = f"HTTP {response.status_code} from /models: {excerpt}"
        return state
    state.up = True
    try:
        data = response.json().get("data")
    except (ValueError, AttributeError):
        state.problem = "/models did not answer a JSON object"
        return state
    for entry in data if isinstance(data, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            state.models.append(entry["id"])
            if isinstance(entry.get("meta"), dict):
                state.model_meta[entry["id"]] = entry["meta"]
    return state


async def round_trip_sec(provider: ProviderConfig, samples: int = 5) -> float | None:
    """The network round trip to the endpoint: the fastest of `samples` GET /v1/models, timed to
    the response's head (a server cannot answer before the request arrives, so no first token
    can come sooner than this). None when the endpoint does not answer it."""
    import httpx

    fastest: float | None = None
    try:
        async with _client(provider, PROBE_TIMEOUT_SEC) as http:
            for _ in range(samples):
                started = time.perf_counter()
                async with http.stream("GET", "models") as response:
                    elapsed = time.perf_counter() - started
                    await response.aread()
                if response.status_code < 400:
                    fastest = elapsed if fastest is None else min(fastest, elapsed)
    except (httpx.HTTPError, ProviderConfigError):
        return fastest
    return fastest


async def model_file_size(provider: ProviderConfig, model: str) -> tuple[int, str] | None:
    """The size in bytes of the model's weights where the endpoint tells it, and how it was
    learnt: llama.cpp's `/v1/models` gives `meta.size`; its `/props` gives `model_path`, whose
    file is read when it is on this machine (a server on loopback)."""
    import httpx

    state = await look(provider)
    meta = state.model_meta.get(model) or (
        next(iter(state.model_meta.values())) if len(state.model_meta) == 1 else None
    )
    if meta and isinstance(meta.get("size"), int | float) and meta["size"] > 0:
        return int(meta["size"]), "the endpoint's /v1/models (meta.size)"
    try:
        async with _client(provider, PROBE_TIMEOUT_SEC) as http:
            response = await http.get(provider.url_for("props", at_root=True))
    except (httpx.HTTPError, ProviderConfigError):
        return None
    if response.status_code >= 400:
        return None
    try:
        props = response.json()
    except ValueError:
        return None
    path = props.get("model_path") if isinstance(props, dict) else None
    if isinstance(path, str) and path:
        try:
            return Path(path).stat().st_size, f"the file {path} named by the endpoint's /props"
        except OSError:
            return None
    return None
