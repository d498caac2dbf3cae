"""The bridge's relay, run inside the sandbox by its own /usr/bin/python3 (standard library only:
benchyard's package may not be visible there); the egress proxy's (bridge/egress.py) is another
copy, wrapped inside the bridge's, on its own port and socket.

    python3 relay.py SOCKET PORT -- COMMAND...

Listens on 127.0.0.1:PORT in the sandbox's own network namespace, relays every connection's
bytes both ways to the bridge's Unix socket SOCKET, runs COMMAND and exits with its status (or
dies of its signal). One thread, a selector: the relay adds no process to the sandbox's count."""

from __future__ import annotations

import os
import selectors
import signal
import socket
import subprocess
import sys

CHUNK = 65536
POLL_SEC = 0.05
SUN_PATH_MAX = 107  # the bytes of a Unix socket's path an address holds, less its NUL


class Pair:
    """One agent connection and its connection to the bridge; each side's end of data is passed on
    as a half-close, and both are closed once neither has more to say."""

    def __init__(self, agent: socket.socket, bridge: socket.socket) -> None:
        self.peer = {agent: bridge, bridge: agent}
        self.open = {agent, bridge}

    def forward(self, source: socket.socket, selector: selectors.BaseSelector) -> None:
        target = self.peer[source]
        try:
            data = source.recv(CHUNK)
            if data:
                target.setblocking(True)
                target.sendall(data)
                target.setblocking(False)
                return
            target.shutdown(socket.SHUT_WR)
        except OSError:
            self.close(selector)
            return
        selector.unregister(source)
        self.open.discard(source)
        if not self.open:
            self.close(selector)

    def close(self, selector: selectors.BaseSelector) -> None:
        for sock in self.peer:
            if sock in self.open:
                selector.unregister(sock)
            sock.close()
        self.open.clear()


def accept(listener: socket.socket, path: str, selector: selectors.BaseSelector) -> None:
    agent, _ = listener.accept()
    # Without it, Nagle holds a reply's second write (its body after its head) for the agent's
    # delayed ACK: 40 ms on every call.
    agent.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    bridge = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        bridge.connect(path)
    except OSError:
        agent.close()
        bridge.close()
        return
    pair = Pair(agent, bridge)
    for sock in (agent, bridge):
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, pair)


def relay(listener: socket.socket, path: str, child: subprocess.Popen[bytes]) -> int:
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, None)
    while child.poll() is None:
        for key, _ in selector.select(POLL_SEC):
            if key.data is None:
                accept(listener, path, selector)
            else:
                key.data.forward(key.fileobj, selector)
    return child.returncode


def address(path: str) -> str:
    """The socket's address: its path, or, when the path is longer than an address holds, the path
    through a descriptor of its directory (kept open for the relay's life, not inherited)."""
    if len(os.fsencode(path)) <= SUN_PATH_MAX:
        return path
    directory = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY)
    return f"/proc/self/fd/{directory}/{os.path.basename(path)}"


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        sys.stderr.write("usage: relay.py SOCKET PORT -- COMMAND...\n")
        return 2
    path, port, command = address(argv[1]), int(argv[2]), argv[4:]
    listener = socket.create_server(("127.0.0.1", port))
    child = subprocess.Popen(command)  # the agent's own command, in its sandbox
    for forwarded in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(forwarded, lambda number, _frame: child.send_signal(number))
    code = relay(listener, path, child)
    if code < 0:  # die of the same signal, so that the caller sees how the command ended
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
