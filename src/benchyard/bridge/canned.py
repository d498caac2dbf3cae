"""A canned model for the bridge: a provider declared with a `script` (a fake-server script,
providers/fake_script.py) is served by benchyard's fake model server in the worker's own process,
on a loopback port of the host for the attempt, so that tests and demos need no provider and no
key. The agent still reaches it only through its bridge, which records its calls as any."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from benchyard.providers.client import ProviderClient
from benchyard.providers.fake_server import FakeLLM


@asynccontextmanager
async def provider_client(client: ProviderClient) -> AsyncIterator[ProviderClient]:
    """`client` itself; for a provider with a `script`, a client of that script served in this
    process while the block runs (its `times:` counted afresh for each attempt)."""
    script = client.config.provider.script
    if script is None:
        yield client
        return
    server = FakeLLM(Path(script))
    await server.start()
    provider = client.config.provider.model_copy(update={"base_url": server.url, "script": None})
    canned = ProviderClient(client.config.model_copy(update={"provider": provider}), client.source)
    try:
        yield canned
    finally:
        await canned.aclose()
        await server.close()
