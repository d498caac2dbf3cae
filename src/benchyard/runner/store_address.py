"""Where a server store listens, by what its URL names once resolved: the addresses its host
names resolve to, and the Unix sockets it is reached through, in every form a URL can name them
(`postgresql://user@name:port/db`, several hosts `h1:5432,h2:5433`, `?host=` and `?hostaddr=`
parameters, a percent-encoded socket directory as the host, no host at all: libpq's default
socket). Used to refuse what would let a sandbox reach the store (runner/isolation.py); text
comparison let `LOCALHOST`, a name resolving to 127.0.0.1 and a socket URL through."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

DEFAULT_PORTS = {"postgresql": 5432, "postgres": 5432, "mysql": 3306, "mariadb": 3306}
DEFAULT_SOCKET_DIR = "/var/run/postgresql"  # libpq's, when a URL names no host and PGHOST is unset


@dataclass(frozen=True)
class StoreEndpoints:
    """What a URL connects to: (address, port) pairs and Unix socket directories or files."""

    addresses: frozenset[tuple[str, int]]
    sockets: tuple[Path, ...]
    names: tuple[str, ...]  # the hosts as written, for messages
    local_ports: frozenset[int] = frozenset()  # ports of this host's servers it reaches

    def meets(self, other: StoreEndpoints) -> bool:
        """Whether `other` reaches a server this one does: an address and port, a socket, or a
        port of this host (by a local address or by a socket: one server holds a port)."""
        shared_sockets = {p.resolve() for p in self.sockets} & {p.resolve() for p in other.sockets}
        shared = self.addresses & other.addresses or self.local_ports & other.local_ports
        return bool(shared or shared_sockets)

    def reaches(self, address: str, port: int) -> bool:
        """Whether a TCP connection to `address:port` reaches a server this one does."""
        local = frozenset({port}) if is_local_address(address) else frozenset()
        return self.meets(StoreEndpoints(frozenset({(address, port)}), (), (), local))


def store_endpoints(url: str) -> StoreEndpoints:
    """The endpoints a database URL names, its names resolved (one that does not resolve adds
    no address: the store's client could not reach it either)."""
    parts = urlsplit(url)
    scheme = parts.scheme.split("+")[0].lower()
    port_default = DEFAULT_PORTS.get(scheme, 0)
    query = parse_qs(parts.query, keep_blank_values=True)
    hosts = _netloc_hosts(parts.netloc.rpartition("@")[2], port_default)
    for key in ("host", "hostaddr", "unix_socket"):
        for value in query.get(key, []):
            hosts += [(item, None) for item in value.split(",") if item]
    ports = [int(p) for value in query.get("port", []) for p in value.split(",") if p.isdigit()]
    if not hosts and scheme in ("postgresql", "postgres"):
        hosts = [(os.environ.get("PGHOST") or DEFAULT_SOCKET_DIR, None)]
    addresses: set[tuple[str, int]] = set()
    sockets: list[Path] = []
    local: set[int] = set()
    for host, port in hosts:
        number = port or (ports[0] if ports else port_default)
        if host.startswith("/"):
            sockets.append(Path(host))
            local.add(number)
            continue
        found = {(address, number) for address in _resolved(host)}
        addresses |= found
        local |= {number for address, _ in found if is_local_address(address)}
    names = tuple(host for host, _ in hosts)
    return StoreEndpoints(frozenset(addresses), tuple(sockets), names, frozenset(local))


def store_on_this_host(url: str, *, through_loopback: bool = True) -> str | None:
    """Why a server store is on this host (a local address its host resolves to, a Unix socket),
    as a phrase; None when it is elsewhere, or a SQLite file. Without `through_loopback` (a
    sandbox whose network does not reach the host's loopback nor its sockets: docker's bridge),
    only an address of one of this host's other interfaces counts."""
    if url.startswith("sqlite"):
        return None
    endpoints = store_endpoints(url)
    if endpoints.sockets and through_loopback:
        return f"reached through the Unix socket {endpoints.sockets[0]}"
    for address, _ in sorted(endpoints.addresses):
        if is_local_address(address) and (through_loopback or not _loopback(address)):
            names = ", ".join(name for name in endpoints.names if name != address)
            named = f"{names}, which is {address}" if names else address
            return f"it listens on {named}, an address of this host"
    return None


def is_local_address(address: str) -> bool:
    """Loopback, unspecified (every local address), or an address of one of this host's
    interfaces (one a socket can be bound to)."""
    try:
        parsed = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    if parsed.is_loopback or parsed.is_unspecified:
        return True
    family = socket.AF_INET6 if parsed.version == 6 else socket.AF_INET
    with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_DGRAM) as probe:
        probe.bind((address, 0))
        return True
    return False


def _netloc_hosts(netloc: str, port_default: int) -> list[tuple[str, int | None]]:
    """The hosts (and ports) of a URL's network location, several separated by commas."""
    hosts: list[tuple[str, int | None]] = []
    for item in filter(None, netloc.split(",")):
        host, port = item, ""
        if item.startswith("["):
            host, _, rest = item[1:].partition("]")
            port = rest.removeprefix(":")
        elif item.count(":") == 1:
            host, _, port = item.partition(":")
        if host:
            hosts.append((unquote(host), int(port) if port.isdigit() else None))
    return hosts


def _resolved(host: str) -> set[str]:
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return set()
    return {str(entry[4][0]) for entry in found}


def _loopback(address: str) -> bool:
    """A loopback or unspecified address (which connects to loopback)."""
    try:
        parsed = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return False
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    return parsed.is_loopback or parsed.is_unspecified
