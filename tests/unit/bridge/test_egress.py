"""The egress proxy faces the agent: what it tunnels, and how it bounds what it reads and how long
it waits. Real sockets on loopback (the proxy on a host port: own_network=False)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from benchyard.bridge import egress as egress_module
from benchyard.bridge.egress import HEAD_LIMIT, MAX_CONNECTIONS, serve_egress
from benchyard.runner.trajectory import Event
from benchyard.sandbox.network import Destination, Egress


@pytest.fixture
async def echo_port() -> AsyncIterator[int]:
    """A loopback server that echoes what it reads."""

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(1024):
            writer.write(data)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    yield int(server.sockets[0].getsockname()[1])
    server.close()


@pytest.fixture
async def proxy_port(echo_port: int, tmp_path: Path) -> AsyncIterator[int]:
    egress = Egress((Destination("127.0.0.1", echo_port),))
    async with serve_egress(egress, tmp_path, [], own_network=False) as session:
        yield int(session.env["HTTPS_PROXY"].rsplit(":", 1)[1])


async def _send(port: int, data: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    return reader, writer


async def _status(port: int, data: bytes) -> bytes:
    reader, writer = await _send(port, data)
    line = await asyncio.wait_for(reader.readline(), 30)
    writer.close()
    return line


async def test_a_named_destination_is_tunnelled_both_ways(proxy_port: int, echo_port: int) -> None:
    reader, writer = await _send(
        proxy_port, f"CONNECT 127.0.0.1:{echo_port} HTTP/1.1\r\n\r\n".encode()
    )
    assert (await asyncio.wait_for(reader.readline(), 30)).startswith(b"HTTP/1.1 200")
    assert await asyncio.wait_for(reader.readline(), 30) == b"\r\n"
    writer.write(b"ping")
    assert await asyncio.wait_for(reader.readexactly(4), 30) == b"ping"
    writer.write_eof()  # passed on: the echo server ends, and so does the tunnel
    assert await asyncio.wait_for(reader.read(), 30) == b""
    writer.close()


async def test_a_plain_http_request_is_forwarded_in_origin_form(
    proxy_port: int, echo_port: int
) -> None:
    """The echo server shows what reached it: the path alone, the proxy's headers gone, and the
    connection closed after the response."""
    head = (
        f"POST http://127.0.0.1:{echo_port}/p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{echo_port}\r\n"
        "Proxy-Authorization: Basic eDp5\r\nProxy-Connection: keep-alive\r\n"
        "Connection: keep-alive\r\nContent-Length: 4\r\n\r\nbody"
    )
    reader, writer = await _send(proxy_port, head.encode())
    writer.write_eof()
    echoed = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    assert (
        echoed
        == (
            f"POST /p?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{echo_port}\r\nContent-Length: 4\r\n"
            "Connection: close\r\n\r\nbody"
        ).encode()
    )


@pytest.mark.parametrize(
    ("request_head", "status"),
    [
        (b"CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n", b"403"),
        (b"CONNECT localhost:{echo} HTTP/1.1\r\n\r\n", b"403"),  # named as 127.0.0.1 only
        (b"GET http://example.org/ HTTP/1.1\r\n\r\n", b"403"),  # port 80, not named
        (b"GET https://127.0.0.1:{echo}/ HTTP/1.1\r\n\r\n", b"405"),
        (b"GET /local HTTP/1.1\r\n\r\n", b"405"),
        (b"GET http://127.0.0.1:99999/ HTTP/1.1\r\n\r\n", b"400"),
        (b"CONNECT nowhere HTTP/1.1\r\n\r\n", b"400"),
        (b"CONNECT 127.0.0.1:{echo}\r\n\r\n", b"400"),
        (b"\r\n\r\n", b"400"),
    ],
)
async def test_anything_else_is_refused(
    proxy_port: int, echo_port: int, request_head: bytes, status: bytes
) -> None:
    line = await _status(proxy_port, request_head.replace(b"{echo}", str(echo_port).encode()))
    assert line.split(b" ")[1] == status


async def test_a_request_head_is_read_up_to_its_limit(proxy_port: int) -> None:
    line = await _status(proxy_port, b"CONNECT " + b"a" * (HEAD_LIMIT * 2))
    assert line.split(b" ")[1] == b"431"


async def test_a_silent_client_is_answered_and_dropped(
    proxy_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(egress_module, "HEAD_TIMEOUT_SEC", 0.5)
    line = await _status(proxy_port, b"CONNECT 127.0.0.1:")
    assert line.split(b" ")[1] == b"408"


async def test_connections_past_the_cap_are_refused_at_once(proxy_port: int) -> None:
    held = [await _send(proxy_port, b"") for _ in range(MAX_CONNECTIONS)]
    await asyncio.sleep(0.5)  # every one of them accepted and waiting for its head
    line = await _status(proxy_port, b"")
    assert line.split(b" ")[1] == b"503"
    for _, writer in held:
        writer.close()


async def test_an_idle_tunnel_is_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(egress_module, "IDLE_TIMEOUT_SEC", 0.5)
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts (its backlog), says nothing
        port = silent.getsockname()[1]
        egress = Egress((Destination("127.0.0.1", port),))
        async with serve_egress(egress, tmp_path, [], own_network=False) as session:
            proxy = int(session.env["HTTPS_PROXY"].rsplit(":", 1)[1])
            reader, writer = await _send(
                proxy, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode()
            )
            assert (await asyncio.wait_for(reader.readline(), 30)).startswith(b"HTTP/1.1 200")
            assert await asyncio.wait_for(reader.read(), 30) == b"\r\n"
            writer.close()


async def test_a_socket_the_agent_replaced_ends_the_proxy_quietly(tmp_path: Path) -> None:
    egress = Egress((Destination("127.0.0.1", 1),))
    async with serve_egress(egress, tmp_path, [], own_network=True):
        (tmp_path / "egress.sock").unlink()
        (tmp_path / "egress.sock").mkdir()
    assert (tmp_path / "egress.sock").is_dir()


async def test_each_connection_is_an_event_of_the_trajectory(
    echo_port: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(egress_module, "MAX_RECORDED", 2)
    trajectory: list[Event] = []
    egress = Egress((Destination("127.0.0.1", echo_port),))
    async with serve_egress(egress, tmp_path, trajectory, own_network=False) as session:
        proxy = int(session.env["HTTPS_PROXY"].rsplit(":", 1)[1])
        head = f"CONNECT 127.0.0.1:{echo_port} HTTP/1.1\r\n\r\n".encode()
        reader, writer = await _send(proxy, head + b"ping")
        assert await asyncio.wait_for(reader.readuntil(b"ping"), 30)
        writer.write_eof()
        await asyncio.wait_for(reader.read(), 30)
        writer.close()
        await asyncio.wait_for(_recorded(trajectory), 30)  # the tunnel's event, once it ended
        for _ in range(3):
            await _status(proxy, b"CONNECT example.org:443 HTTP/1.1\r\n\r\n")
    tunnel, refused, past = trajectory
    assert tunnel.kind == "log" and tunnel.data == {
        "source": "egress",
        "status": 200,
        "destination": f"127.0.0.1:{echo_port}",
        "duration_sec": tunnel.data["duration_sec"],
        "sent": 4,
        "received": 4,
    }
    assert refused.data == {"source": "egress", "status": 403}
    assert "example.org:443 is not among the destinations" in refused.content
    assert "past the first 2 are not recorded" in past.content


async def _recorded(trajectory: list[Event]) -> None:
    while not trajectory:
        await asyncio.sleep(0.01)


async def test_closing_the_proxy_ends_an_open_tunnel_quietly(
    echo_port: int, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The attempt's end closes its tunnels still open, and asyncio logs no error for them."""
    trajectory: list[Event] = []
    egress = Egress((Destination("127.0.0.1", echo_port),))
    async with serve_egress(egress, tmp_path, trajectory, own_network=False) as session:
        proxy = int(session.env["HTTPS_PROXY"].rsplit(":", 1)[1])
        head = f"CONNECT 127.0.0.1:{echo_port} HTTP/1.1\r\n\r\n".encode()
        reader, writer = await _send(proxy, head)
        assert (await asyncio.wait_for(reader.readline(), 30)).startswith(b"HTTP/1.1 200")
    assert await asyncio.wait_for(reader.read(), 30) == b"\r\n"  # then the end, once closed
    writer.close()
    await asyncio.sleep(0.1)  # the loop runs the stream server's callbacks
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == []
    assert "tunnel to" in trajectory[0].content


async def test_a_socket_path_longer_than_an_address_is_served(tmp_path: Path) -> None:
    from benchyard.bridge.relay import address

    io_dir = tmp_path / ("a-long-io-directory-name-" * 4)
    io_dir.mkdir()
    async with serve_egress(Egress((Destination("127.0.0.1", 1),)), io_dir, [], own_network=True):
        path = str(io_dir / "egress.sock")
        assert len(path) > 108
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.setblocking(False)
        loop = asyncio.get_running_loop()
        await loop.sock_connect(client, address(path))  # as the relay in the sandbox does
        await loop.sock_sendall(client, b"CONNECT example.org:443 HTTP/1.1\r\n\r\n")
        assert (await asyncio.wait_for(loop.sock_recv(client, 100), 30)).startswith(b"HTTP/1.1 403")
        client.close()
