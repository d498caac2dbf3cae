"""Webhook receivers that attack the sender, as real HTTP servers on loopback: one answers with a
body without end, one trickles its answer a byte at a time and never finishes it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

CHUNK = b"x" * (1 << 20)


@dataclass
class Hostile:
    url: str = ""
    connections: int = 0
    sent_bytes: int = 0  # what the sender took of the answer before hanging up
    stop: threading.Event = field(default_factory=threading.Event)


@contextmanager
def hostile_receiver(kind: str, limit_bytes: int = 1 << 30) -> Iterator[Hostile]:
    """`kind` "huge": a 200 whose body goes on until the sender hangs up (or `limit_bytes`);
    "trickle": a status line, then one byte of a header every 0.2 s, never ending."""
    state = Hostile()
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    state.url = f"http://127.0.0.1:{listener.getsockname()[1]}/hook"

    def serve(connection: socket.socket) -> None:
        with connection:
            connection.settimeout(5)
            _read_request(connection)
            try:
                if kind == "huge":
                    connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n")
                    while state.sent_bytes < limit_bytes and not state.stop.is_set():
                        state.sent_bytes += connection.send(CHUNK)
                else:
                    connection.sendall(b"HTTP/1.1 200 OK\r\nx-slow: ")
                    while not state.stop.wait(0.2):
                        connection.sendall(b"y")
            except OSError:
                pass  # the sender hung up: what this test wants

    def accept() -> None:
        while not state.stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            state.connections += 1
            threading.Thread(target=serve, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stop.set()
        thread.join(timeout=5)
        listener.close()


def _read_request(connection: socket.socket) -> None:
    """Read the request's head and its body (by its content-length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            return
        body += chunk
