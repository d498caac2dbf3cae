"""A small HTTP/1.1 server on asyncio streams, for loopback use only: the fake OpenAI-compatible
server and the tool server that command agents call. Keep-alive, Content-Length request bodies,
whole or chunked responses, and the faults a test needs (a connection reset, a cut-off body)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

MAX_BODY_BYTES = 16 * 1024 * 1024
MAX_HEADER_LINES = 100


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes

    def json(self) -> Any:
        """The body as JSON; ValueError when it is not."""
        return json.loads(self.body or b"null")


class Responder:
    """Writes the one response to a request: `send` a whole one, or `start` a chunked one, then
    `chunk` and `end`; `reset` and `cut` produce the faults."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.keep_alive = True

    async def send(
        self, status: int, body: bytes | str | Any, headers: dict[str, str] | None = None
    ) -> None:
        if not isinstance(body, bytes):
            body = (body if isinstance(body, str) else json.dumps(body)).encode()
            headers = {"Content-Type": "application/json", **(headers or {})}
        self._head(status, {**(headers or {}), "Content-Length": str(len(body))})
        self.writer.write(body)
        await self.writer.drain()

    async def send_cut(
        self, status: int, body: bytes, headers: dict[str, str] | None = None
    ) -> None:
        """Announce the whole body, send half of it, and close the connection (a truncated reply)."""
        self._head(status, {**(headers or {}), "Content-Length": str(len(body))})
        self.writer.write(body[: len(body) // 2])
        await self.writer.drain()
        self.cut()

    async def start(self, status: int, headers: dict[str, str] | None = None) -> None:
        self._head(status, {**(headers or {}), "Transfer-Encoding": "chunked"})
        await self.writer.drain()

    async def chunk(self, data: bytes) -> None:
        if data:
            self.writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            await self.writer.drain()

    async def end(self) -> None:
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()

    def reset(self) -> None:
        """Drop the connection with a TCP reset (RST), as a crashed or overloaded server does."""
        sock = self.writer.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()
        self.keep_alive = False

    def cut(self) -> None:
        """Close the connection in the middle of a response body (a truncated reply)."""
        self.writer.close()
        self.keep_alive = False

    def _head(self, status: int, headers: dict[str, str]) -> None:
        reason = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else ""
        lines = [f"HTTP/1.1 {status} {reason}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if not self.keep_alive:
            lines.append("Connection: close")
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))


Handler = Callable[[Request, Responder], Awaitable[None]]


class LoopbackServer:
    """Serves `handler` on 127.0.0.1 (a free port unless given) and/or a Unix socket."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.servers: list[asyncio.Server] = []
        self.port = 0
        self.connections: set[asyncio.StreamWriter] = set()

    async def listen_tcp(self, host: str = "127.0.0.1", port: int = 0) -> int:
        server = await asyncio.start_server(self._connection, host, port, backlog=1024)
        self.servers.append(server)
        self.port = int(server.sockets[0].getsockname()[1])
        return self.port

    async def listen_unix(self, path: Path) -> None:
        self.servers.append(await asyncio.start_unix_server(self._connection, str(path)))

    async def close(self) -> None:
        for server in self.servers:
            server.close()
        for writer in list(self.connections):
            writer.close()
        for server in self.servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self.servers.clear()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections.add(writer)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                responder = Responder(writer)
                responder.keep_alive = request.headers.get("connection", "").lower() != "close"
                await self.handler(request, responder)
                if not responder.keep_alive:
                    break
        except _BadRequest as error:
            with contextlib.suppress(ConnectionError):
                await Responder(writer).send(400, {"error": {"message": str(error)}})
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.connections.discard(writer)
            if not writer.is_closing():
                writer.close()


class _BadRequest(Exception):
    pass


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    line = await reader.readline()
    if not line.strip():
        return None
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        raise _BadRequest("malformed request line")
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADER_LINES):
        header = await reader.readline()
        if header in (b"\r\n", b"\n", b""):
            break
        name, _, value = header.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise _BadRequest("bad Content-Length") from None
    if length < 0 or length > MAX_BODY_BYTES:
        raise _BadRequest(f"request body over {MAX_BODY_BYTES} bytes")
    body = await reader.readexactly(length) if length else b""
    return Request(parts[0].upper(), parts[1], headers, body)
