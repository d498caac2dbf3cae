"""A small HTTP/1.1 server on asyncio streams, for loopback use only: the fake OpenAI-compatible
server and the tool server that command agents call. Keep-alive, Content-Length request bodies,
whole or chunked responses, and the faults a test needs (a connection reset, a cut-off body).

A server whose clients may be hostile (the tool server: an agent is its client) is given limits:
a cap on the connections open at once (`ConnectionLimit`, shareable by several servers: the
connections over it are closed as soon as they are accepted) and a time limit on each request
(`request_timeout_sec`: reading it and answering it), so that a client cannot hold a connection
idle or trickle a request. Running out of file descriptors while accepting is waited out quietly,
with no log and no traceback."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import socket
import stat
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any

MAX_BODY_BYTES = 16 * 1024 * 1024
MAX_HEADER_LINES = 100
BACKLOG = 1024
# accept() failing for one connection only (accept the next at once); for any other error (out
# of descriptors: EMFILE, ENFILE; of memory: ENOBUFS, ENOMEM) wait a little and accept again.
PASSING_ACCEPT_ERRORS = frozenset({errno.ECONNABORTED, errno.EPROTO, errno.EPERM, errno.EINTR})
ACCEPT_PAUSE_SEC = 0.1


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes

    def json(self) -> Any:
        """The body as JSON; ValueError when it is not."""
        try:
            return json.loads(self.body or b"null")
        except RecursionError:
            raise ValueError("the body is nested too deep") from None


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

    async def start_sized(
        self, status: int, length: int, headers: dict[str, str] | None = None
    ) -> None:
        """Announce a body of `length` bytes, to be sent with `raw`."""
        self._head(status, {**(headers or {}), "Content-Length": str(length)})
        await self.writer.drain()

    async def raw(self, data: bytes) -> None:
        self.writer.write(data)
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


class ConnectionLimit:
    """At most `most` connections open at once, across the servers that share this limit."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.open = 0

    def take(self) -> bool:
        if self.open >= self.most:
            return False
        self.open += 1
        return True

    def give_back(self) -> None:
        self.open -= 1


SUN_PATH_MAX = 107  # the bytes of a Unix socket's path an address holds, less its NUL


def unix_listener(path: Path) -> socket.socket:
    """A listening Unix socket at `path`, however long: a path over SUN_PATH_MAX is bound through
    a descriptor of its directory (/proc/self/fd/N/NAME), as the relay in the sandbox connects."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    directory = None
    try:
        address = str(path)
        if len(os.fsencode(address)) > SUN_PATH_MAX:
            directory = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
            address = f"/proc/self/fd/{directory}/{path.name}"
        listener.bind(address)
        listener.listen(BACKLOG)
    except OSError:
        listener.close()
        raise
    finally:
        if directory is not None:
            os.close(directory)
    return listener


class LoopbackServer:
    """Serves `handler` on 127.0.0.1 (a free port unless given) and/or a Unix socket; with a
    `limit` on the connections open at once and a `request_timeout_sec` per request when given."""

    def __init__(
        self,
        handler: Handler,
        *,
        limit: ConnectionLimit | None = None,
        request_timeout_sec: float | None = None,
    ) -> None:
        self.handler = handler
        self.limit = limit
        self.request_timeout_sec = request_timeout_sec
        self.listeners: list[socket.socket] = []
        self.port = 0
        self.connections: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def listen_tcp(self, host: str = "127.0.0.1", port: int = 0) -> int:
        listener = socket.create_server((host, port), backlog=BACKLOG)
        self._serve(listener)
        self.port = int(listener.getsockname()[1])
        return self.port

    async def listen_unix(self, path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                path.unlink()  # a socket left behind: nobody listens on it any more
        self._serve(unix_listener(path))

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        for task in list(self._tasks):
            task.cancel()
        for listener in self.listeners:
            # The cancelled accept removes its reader only on the loop's next turn. Closed before
            # that, the descriptor's number is free while the selector still holds a key for it:
            # a pidfd or pipe opened meanwhile gets that number, the loop takes the stale key for
            # its own and never registers it with epoll, and that child's exit is never seen.
            with contextlib.suppress(ValueError):
                loop.remove_reader(listener)
            listener.close()
        for writer in list(self.connections):
            writer.close()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self.listeners.clear()

    def _serve(self, listener: socket.socket) -> None:
        listener.setblocking(False)
        self.listeners.append(listener)
        self._spawn(self._accept(listener))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept(self, listener: socket.socket) -> None:
        """Accept connections until closed: those over the limit are closed at once; running
        out of descriptors pauses accepting (the kernel keeps the backlog meanwhile)."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                connection, _ = await loop.sock_accept(listener)
            except OSError as error:
                if listener.fileno() < 0:
                    return  # closed
                if error.errno not in PASSING_ACCEPT_ERRORS:  # out of descriptors, or worse
                    await asyncio.sleep(ACCEPT_PAUSE_SEC)
                continue
            if self.limit is not None and not self.limit.take():
                connection.close()
                continue
            self._spawn(self._open(connection))

    async def _open(self, connection: socket.socket) -> None:
        try:
            if connection.family in (socket.AF_INET, socket.AF_INET6):
                # asyncio sets TCP_NODELAY only on sockets made with proto IPPROTO_TCP, which
                # create_server's are not: without it, Nagle holds each small write (a streamed
                # chunk) until the last is acknowledged, up to a delayed ACK's 40 ms.
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            loop = asyncio.get_running_loop()
            reader = asyncio.StreamReader()
            protocol = asyncio.StreamReaderProtocol(reader)
            transport, _ = await loop.connect_accepted_socket(lambda: protocol, connection)
            writer = asyncio.StreamWriter(transport, protocol, reader, loop)
            await self._connection(reader, writer)
        except OSError:
            connection.close()
        finally:
            if self.limit is not None:
                self.limit.give_back()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections.add(writer)
        try:
            while await self._exchange(reader, writer):
                pass
        except (_BadRequest, ValueError) as error:  # ValueError: a line over the reader's limit
            with contextlib.suppress(ConnectionError, TimeoutError):
                async with asyncio.timeout(self.request_timeout_sec):
                    await Responder(writer).send(400, {"error": {"message": str(error)}})
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        finally:
            self.connections.discard(writer)
            if not writer.is_closing():
                writer.close()

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read one request and answer it, within the request time limit; False when the
        connection is done."""
        async with asyncio.timeout(self.request_timeout_sec):
            request = await _read_request(reader)
            if request is None:
                return False
            responder = Responder(writer)
            responder.keep_alive = request.headers.get("connection", "").lower() != "close"
            await self.handler(request, responder)
            return responder.keep_alive


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
