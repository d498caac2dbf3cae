"""The `fake-llm` command: benchyard's fake model server (OpenAI chat completions and Responses,
Anthropic Messages), for your own pipelines."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchyard.cli.errors import handle_errors

APIS = "OpenAI chat completions and Responses, Anthropic Messages"


@handle_errors
def fake_llm(
    script: Annotated[
        Path | None,
        typer.Option(
            "--script", help="YAML or JSON replies keyed on the prompt (see docs/models.md)."
        ),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, help="0: a free port.")] = 8089,
) -> None:
    """Serve a fake model endpoint (OpenAI chat completions and Responses API, Anthropic Messages)
    with scripted replies, tool calls and faults."""
    import asyncio

    from benchyard.providers.fake_server import FakeLLM

    async def serve() -> None:
        server = FakeLLM(script)
        await server.start(host, port)
        typer.echo(f"fake model server ({APIS}) at http://{host}:{server.server.port}/v1")
        try:
            await asyncio.Event().wait()
        finally:
            await server.close()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        raise typer.Exit(0) from None
