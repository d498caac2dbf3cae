"""The egress proxy: under `--network HOST:PORT,...`, an agent reaches the named destinations, and
nothing else, through an HTTP CONNECT proxy benchyard runs for its attempt.

The proxy runs on the harness side, which may connect out: it listens on a Unix socket in the
attempt's io dir, and a relay inside the sandbox (bridge/relay.py, as for the model bridge) listens
on 127.0.0.1:PROXY_PORT in the sandbox's own network namespace; where the agent shares the host's
network it listens on a free loopback port instead. The agent is told where by HTTPS_PROXY and
HTTP_PROXY (which pip, npm, curl and httpx honour) and BENCHYARD_EGRESS_PROXY.

A connection's request head is read within HEAD_TIMEOUT_SEC and HEAD_LIMIT bytes; only a named
destination is reached, by `CONNECT HOST:PORT` (a tunnel) or a plain-HTTP request
`METHOD http://HOST:PORT/...` (forwarded in origin form, the connection closed after its
response), its name resolved here and its address refused when it reaches the store (even when
named); at most MAX_CONNECTIONS at once, and a tunnel
idle for IDLE_TIMEOUT_SEC both ways is closed. Everything the agent sends is attacker-controlled.
Each connection is an event of the attempt's trajectory (`log`, source `egress`): its destination
and the bytes it carried each way, or why it was refused; the first MAX_RECORDED of them."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from benchyard.bridge.server import RELAY_PYTHON
from benchyard.providers.http_server import unix_listener
from benchyard.runner.trajectory import Event
from benchyard.sandbox.identity import sandbox_user
from benchyard.sandbox.network import Destination, Egress, NetworkSpecError, destination
from benchyard.untrusted import remove_socket, write_fresh

SOCKET_NAME = "egress.sock"
RELAY_NAME = "egress_relay.py"
PROXY_PORT = 18081  # in the sandbox's own network namespace, beside the bridge's RELAY_PORT
HEAD_LIMIT = 8192
HEAD_TIMEOUT_SEC = 10.0
CONNECT_TIMEOUT_SEC = 10.0
IDLE_TIMEOUT_SEC = 300.0
MAX_CONNECTIONS = 32
MAX_RECORDED = 256  # connections recorded in the trajectory, each as one event
SOURCE = "egress"
CHUNK = 65536
# A forwarded request's headers meant for the proxy, or for this one connection: never passed on.
HOP_HEADERS = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization"})
# Loopback is the model bridge's (and the tool server's): clients go there directly.
NO_PROXY = "127.0.0.1,localhost,::1"


class Refused(Exception):
    """A CONNECT the proxy answers with an error status instead of a tunnel."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class Activity:
    """What a tunnel carried each way (`sent` by the agent, `received` by it), and when it last
    carried anything: it is idle only when both directions are."""

    started: float = field(default_factory=time.monotonic)
    last: float = field(default_factory=time.monotonic)
    carried: dict[str, int] = field(default_factory=lambda: {"sent": 0, "received": 0})

    def carry(self, direction: str, size: int) -> None:
        self.carried[direction] += size
        self.last = time.monotonic()

    def idle(self) -> bool:
        return time.monotonic() - self.last >= IDLE_TIMEOUT_SEC


@dataclass
class EgressProxy:
    """One attempt's proxy: what it allows, its connections (all cancelled when it closes), and
    the attempt's trajectory, where each connection is an event (the first MAX_RECORDED)."""

    egress: Egress
    trajectory: list[Event] = field(default_factory=list)
    connections: set[asyncio.Task[None]] = field(default_factory=set)
    recorded: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.connections.add(task)
        try:
            await self._tunnel(reader, writer)
        except (OSError, asyncio.IncompleteReadError):
            pass  # the agent went away
        except asyncio.CancelledError:
            # The proxy closing (the attempt's end) ends the connection here: a handler that
            # ended cancelled is logged as an error by asyncio's stream server (Python 3.11).
            pass
        finally:
            self.connections.discard(task)
            writer.close()

    async def _tunnel(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if len(self.connections) > MAX_CONNECTIONS:
                raise Refused(503, f"over {MAX_CONNECTIONS} connections at once")
            request = await _proxy_request(reader)
            target = request.target
            if not self.egress.allows(target):
                raise Refused(403, f"{target} is not among the destinations --network names")
            upstream_reader, upstream_writer = await self._connect(target)
        except Refused as refused:
            self._record(f"refused ({refused.status}): {refused.reason}", status=refused.status)
            await _answer(writer, refused.status, refused.reason)
            return
        activity = Activity()
        try:
            if request.forwarded is None:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream_writer.write(request.forwarded)
            await asyncio.gather(
                _pipe(reader, upstream_writer, activity, "sent"),
                _pipe(upstream_reader, writer, activity, "received"),
            )
        finally:
            upstream_writer.close()
            seconds = round(time.monotonic() - activity.started, 3)
            sent, received = activity.carried["sent"], activity.carried["received"]
            kind = "tunnel" if request.forwarded is None else "forwarded request"
            self._record(
                f"{kind} to {target}: {sent} bytes sent, {received} received, {seconds:g} s",
                status=200,
                destination=str(target),
                duration_sec=seconds,
                **activity.carried,
            )

    def _record(self, what: str, **data: object) -> None:
        """One connection as a trajectory event, up to MAX_RECORDED; then one saying so."""
        self.recorded += 1
        if self.recorded > MAX_RECORDED + 1:
            return
        if self.recorded > MAX_RECORDED:
            what, data = f"connections past the first {MAX_RECORDED} are not recorded", {}
        event_data = {"source": SOURCE, **data}
        self.trajectory.append(Event("log", f"egress proxy: {what}", data=event_data))

    async def _connect(
        self, target: Destination
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A connection to the first of the target's addresses that is not the store and
        answers; Refused when none."""
        addresses = await _resolved(target)
        allowed = [
            address for address in addresses if not self.egress.refuses(address, target.port)
        ]
        if not allowed:
            raise Refused(403, f"{target} reaches the store, which no agent may reach")
        for address in allowed:
            with contextlib.suppress(OSError, TimeoutError):
                return await asyncio.wait_for(
                    asyncio.open_connection(address, target.port), CONNECT_TIMEOUT_SEC
                )
        raise Refused(502, f"{target} could not be reached")

    async def close(self) -> None:
        for task in list(self.connections):
            task.cancel()
        await asyncio.gather(*self.connections, return_exceptions=True)


@dataclass(frozen=True)
class ProxyRequest:
    """What a request head asks of the proxy: a destination, and for a plain-HTTP request
    (`GET http://HOST:PORT/path`) the head to send it in its place (None: a CONNECT tunnel)."""

    target: Destination
    forwarded: bytes | None = None


async def _proxy_request(reader: asyncio.StreamReader) -> ProxyRequest:
    """The request head, read within its time and size limits; Refused when it is neither
    `CONNECT HOST:PORT HTTP/1.x` nor `METHOD http://HOST[:PORT]/... HTTP/1.x`."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_SEC)
    except TimeoutError:
        raise Refused(408, f"no request head within {HEAD_TIMEOUT_SEC:g} s") from None
    except asyncio.LimitOverrunError:
        raise Refused(431, f"a request head over {HEAD_LIMIT} bytes") from None
    request_line, *headers = head.decode("latin-1").split("\r\n")[:-2]
    words = request_line.split(" ")
    if len(words) != 3 or not words[0].isalpha() or not words[2].startswith("HTTP/1."):
        raise Refused(400, "not an HTTP/1 request")
    method, target, version = words
    if method == "CONNECT":
        return ProxyRequest(_destination(target))
    if not target.lower().startswith("http://"):
        raise Refused(405, "this proxy tunnels (CONNECT HOST:PORT) or forwards http:// requests")
    return _forwarded(method, target, version, headers)


def _forwarded(method: str, url: str, version: str, headers: list[str]) -> ProxyRequest:
    """A plain-HTTP request for its destination: in origin form, without the proxy's own headers,
    and closing the connection after its response (so that no later request on it goes to a
    destination it was not checked for)."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or 80
    except ValueError:
        raise Refused(400, "the request names no HOST:PORT") from None
    target = _destination(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    kept = [line for line in headers if line.split(":", 1)[0].strip().lower() not in HOP_HEADERS]
    head = "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close", "", ""])
    return ProxyRequest(target, head.encode("latin-1"))


def _destination(text: str) -> Destination:
    try:
        return destination(text)
    except NetworkSpecError:
        raise Refused(400, "the request names no HOST:PORT") from None


async def _resolved(target: Destination) -> list[str]:
    """The target's addresses, its name resolved here (the sandbox resolves nothing)."""
    loop = asyncio.get_running_loop()
    try:
        found = await asyncio.wait_for(
            loop.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM),
            CONNECT_TIMEOUT_SEC,
        )
    except (OSError, UnicodeError, TimeoutError):
        raise Refused(502, f"{target.host} could not be resolved") from None
    return list(dict.fromkeys(str(entry[4][0]) for entry in found))


async def _pipe(
    source: asyncio.StreamReader,
    target: asyncio.StreamWriter,
    activity: Activity,
    direction: str,
) -> None:
    """Copy `source` to `target` until its end (passed on as a half-close), an error, or the
    tunnel idle both ways for IDLE_TIMEOUT_SEC; then stop `target` whatever it was doing."""
    try:
        while True:
            try:
                data = await asyncio.wait_for(source.read(CHUNK), IDLE_TIMEOUT_SEC)
            except TimeoutError:
                if activity.idle():
                    break
                continue
            if not data:
                if target.can_write_eof():
                    target.write_eof()
                return
            activity.carry(direction, len(data))
            target.write(data)
            await asyncio.wait_for(target.drain(), IDLE_TIMEOUT_SEC)
    except (OSError, TimeoutError):
        pass
    target.close()


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    body = f"benchyard egress proxy: {reason}\n".encode()
    head = f"HTTP/1.1 {status} Refused\r\nContent-Type: text/plain\r\n"
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    writer.write(head.encode() + body)
    with contextlib.suppress(OSError, TimeoutError):
        await asyncio.wait_for(writer.drain(), HEAD_TIMEOUT_SEC)


@dataclass
class EgressSession:
    """A served proxy: the variables the agent gets, and the command prefix of its relay."""

    env: dict[str, str]
    relay: tuple[str, ...] = ()

    def wrap(self, argv: list[str]) -> list[str]:
        return [*self.relay, *argv]


@asynccontextmanager
async def serve_egress(
    egress: Egress, io_dir: Path, trajectory: list[Event], *, own_network: bool
) -> AsyncIterator[EgressSession]:
    """Serve the proxy while the block runs, each connection recorded in `trajectory`: on a
    Unix socket in `io_dir` relayed inside the sandbox when it has a network namespace of its
    own, else on a free loopback port."""
    proxy = EgressProxy(egress, trajectory)
    socket_path = io_dir / SOCKET_NAME
    try:
        if own_network:
            server = await _listen_unix(proxy, socket_path)
            port, relay = PROXY_PORT, _relay(io_dir, socket_path)
        else:
            server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0, limit=HEAD_LIMIT)
            port, relay = int(server.sockets[0].getsockname()[1]), ()
        try:
            yield EgressSession(_environment(port, egress), relay)
        finally:
            server.close()
            await proxy.close()
    finally:
        remove_socket(socket_path)


async def _listen_unix(proxy: EgressProxy, socket_path: Path) -> asyncio.Server:
    server = await asyncio.start_unix_server(
        proxy.handle, sock=unix_listener(socket_path), limit=HEAD_LIMIT
    )
    sandbox_user().hand_socket(socket_path)
    return server


def _relay(io_dir: Path, socket_path: Path) -> tuple[str, ...]:
    relay = io_dir / RELAY_NAME
    write_fresh(relay, (Path(__file__).parent / "relay.py").read_bytes())
    return (RELAY_PYTHON, str(relay), str(socket_path), str(PROXY_PORT), "--")


def _environment(port: int, egress: Egress) -> dict[str, str]:
    """The variables HTTP clients read for their proxy, all naming this one."""
    url = f"http://127.0.0.1:{port}"
    proxies = ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "BENCHYARD_EGRESS_PROXY")
    return {
        **dict.fromkeys(proxies, url),
        "NO_PROXY": NO_PROXY,
        "no_proxy": NO_PROXY,
        "BENCHYARD_NETWORK": ",".join(map(str, egress.destinations)),
    }
