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
from typing import TYPE_CHECKING, Any

from benchyard.agents.toolbox import ToolBox
from benchyard.sandbox.identity import sandbox_user
from benchyard.untrusted import remove_socket

if TYPE_CHECKING:  # the server's module loads only when a scenario has tools to serve
    from benchyard.providers.http_server import ConnectionLimit, LoopbackServer, Request, Responder

SOCKET_NAME = "tools.sock"
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes
MAX_CONNECTIONS = 32  # open at once, over TCP and the socket together, per attempt
REQUEST_TIMEOUT_SEC = 30.0  # to send a whole request and take its answer


@asynccontextmanager
async def serve_tools(toolbox: ToolBox | None, io_dir: Path) -> AsyncIterator[dict[str, str]]:
    """Serve `toolbox` while the block runs; yields the environment variables naming the server
    (none when the scenario has no tools). The agent is a client that may be hostile: its
    connections are capped (MAX_CONNECTIONS, the rest closed at once) and each request has
    REQUEST_TIMEOUT_SEC, so that it cannot exhaust benchyard's descriptors."""
    if toolbox is None:
        yield {}
        return
    from benchyard.providers.http_server import ConnectionLimit

    prefix = "/" + secrets.token_hex(8)
    limit = ConnectionLimit(MAX_CONNECTIONS)
    servers = [_server(_Handler(toolbox, prefix), limit)]
    port = await servers[0].listen_tcp()
    env = {"BENCHYARD_TOOLS_URL": f"http://127.0.0.1:{port}{prefix}"}
    socket_path = io_dir / SOCKET_NAME
    try:
        if len(str(socket_path)) <= MAX_SOCKET_PATH:
            servers.append(_server(_Handler(toolbox, ""), limit))
            await servers[1].listen_unix(socket_path)
            sandbox_user().hand_socket(socket_path)
            env["BENCHYARD_TOOLS_SOCKET"] = str(socket_path)
        yield env
    finally:
        for server in servers:
            await server.close()
        remove_socket(socket_path)


def _server(handler: _Handler, limit: ConnectionLimit) -> LoopbackServer:
    from benchyard.providers.http_server import LoopbackServer

    return LoopbackServer(handler.handle, limit=limit, request_timeout_sec=REQUEST_TIMEOUT_SEC)


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
