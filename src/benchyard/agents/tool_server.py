"""The tool server: the scenario's tools served to a command agent over loopback HTTP, so that its
tool calls are made through benchyard and observed by it, never merely self-reported.

One server per attempt, for the attempt's lifetime, on 127.0.0.1 (a free port, under a random
path, so that no other attempt reaches it by chance) and on a Unix socket in the attempt's io dir
(for sandboxes without a network; there the paths have no prefix):

    GET  $BENCHYARD_TOOLS_URL/tools   -> {"tools": [OpenAI-style function definitions]}
    POST $BENCHYARD_TOOLS_URL/call    {"name": "...", "arguments": {...}}
                                      -> {"call_id": "...", "result": "..."} or {..., "error": "..."}
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from benchyard.agents.toolbox import ToolBox
from benchyard.providers.http_server import LoopbackServer, Request, Responder

SOCKET_NAME = "tools.sock"
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes


@asynccontextmanager
async def serve_tools(toolbox: ToolBox | None, io_dir: Path) -> AsyncIterator[dict[str, str]]:
    """Serve `toolbox` while the block runs; yields the environment variables naming the server
    (none when the scenario has no tools)."""
    if toolbox is None:
        yield {}
        return
    prefix = "/" + secrets.token_hex(8)
    servers = [LoopbackServer(_Handler(toolbox, prefix).handle)]
    port = await servers[0].listen_tcp()
    env = {"BENCHYARD_TOOLS_URL": f"http://127.0.0.1:{port}{prefix}"}
    socket_path = io_dir / SOCKET_NAME
    try:
        if len(str(socket_path)) <= MAX_SOCKET_PATH:
            servers.append(LoopbackServer(_Handler(toolbox, "").handle))
            await servers[1].listen_unix(socket_path)
            env["BENCHYARD_TOOLS_SOCKET"] = str(socket_path)
        yield env
    finally:
        for server in servers:
            await server.close()
        socket_path.unlink(missing_ok=True)


class _Handler:
    def __init__(self, toolbox: ToolBox, prefix: str) -> None:
        self.toolbox = toolbox
        self.prefix = prefix

    async def handle(self, request: Request, respond: Responder) -> None:
        path = request.path.split("?", 1)[0].rstrip("/")
        route = path.removeprefix(self.prefix) if path.startswith(self.prefix + "/") else None
        if request.method == "GET" and route == "/tools":
            await respond.send(200, {"tools": self.toolbox.definitions()})
        elif request.method == "POST" and route == "/call":
            status, body = self._call(request)
            await respond.send(status, body)
        else:
            await respond.send(404, {"error": f"no route {request.method} {request.path}"})

    def _call(self, request: Request) -> tuple[int, dict[str, Any]]:
        try:
            body = request.json()
        except ValueError as error:
            return 400, {"error": f"the request body is not JSON: {error}"}
        if not isinstance(body, dict) or not isinstance(body.get("name"), str):
            return 400, {"error": 'expected {"name": "...", "arguments": {...}}'}
        arguments = body.get("arguments", {})
        if not isinstance(arguments, dict | str):
            return 400, {"error": "arguments must be an object (or its JSON text)"}
        answer = self.toolbox.call(body["name"], arguments)
        key = "error" if answer.error else "result"
        return 200, {"call_id": answer.call_id, key: answer.text}
