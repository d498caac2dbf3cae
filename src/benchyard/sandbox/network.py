"""What `--network` may say: a mode (`none`, `bridge`, `all`) or named destinations
(`HOST:PORT,...`), which an agent reaches, beside its model bridge, through the egress proxy
(bridge/egress.py) and nothing else; and what that proxy refuses whatever is named: the store."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from benchyard.runner.store_address import StoreEndpoints

NETWORK_MODES = ("none", "bridge", "all")
MAX_DESTINATIONS = 64
# A host name: dot-separated labels of letters, digits and inner hyphens (RFC 1123).
_LABEL = r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)"
_HOST_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?")


class NetworkSpecError(ValueError):
    """A `--network` value that is neither a mode nor a list of HOST:PORT."""


@dataclass(frozen=True)
class Destination:
    """One named destination: a host name or IP address, and a TCP port."""

    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@dataclass(frozen=True)
class Egress:
    """The destinations an agent may reach through the egress proxy, and the store, which it is
    refused even where a named host resolves to it (None: a SQLite store, nothing to refuse)."""

    destinations: tuple[Destination, ...]
    store: StoreEndpoints | None = None

    def allows(self, target: Destination) -> bool:
        return target in self.destinations

    def refuses(self, address: str, port: int) -> bool:
        """Whether the resolved `address:port` reaches the store."""
        return self.store is not None and self.store.reaches(address, port)


def is_mode(network: str) -> bool:
    return network in NETWORK_MODES


def canonical_network(network: str) -> str:
    """The mode, or the destinations written one way (lower-case names, no duplicates);
    NetworkSpecError naming the bad entry."""
    if is_mode(network):
        return network
    return ",".join(map(str, parse_destinations(network)))


def requested_network(network: str | None, allow_network: bool) -> str:
    """The network a queued run asks for with `network` and its alias `allow_network` (`all`),
    written one way; `bridge` when neither is given. NetworkSpecError when they disagree or
    `network` is neither a mode nor HOST:PORT,..."""
    if allow_network and network not in (None, "", "all"):
        raise NetworkSpecError(
            f"allow_network means network all, not network {network}: give one of them"
        )
    return "all" if allow_network else canonical_network(network or "bridge")


def parse_destinations(network: str) -> tuple[Destination, ...]:
    """`HOST:PORT,...` as destinations, each once, in order; NetworkSpecError naming the first
    bad entry."""
    entries = [entry.strip() for entry in network.split(",")]
    if len(entries) > MAX_DESTINATIONS:
        raise NetworkSpecError(
            f"--network names {len(entries)} destinations, over the {MAX_DESTINATIONS} it may"
        )
    found: dict[Destination, None] = {}
    for entry in entries:
        found[destination(entry)] = None
    return tuple(found)


def destination(entry: str) -> Destination:
    """One `HOST:PORT` (an IPv6 address in brackets), its host written one way."""
    if not entry:
        raise NetworkSpecError(
            "an empty entry in the list: give none, bridge, all or HOST:PORT,..."
        )
    if is_mode(entry):
        raise NetworkSpecError(
            f"'{entry}' cannot be listed with destinations: give it alone (named "
            "destinations come with the model bridge)"
        )
    host, port = _split(entry)
    if entry.startswith("[") and ":" not in host:
        raise NetworkSpecError(f"'{entry}' has no IPv6 address in its brackets")
    return Destination(_checked_host(host, entry), _checked_port(port, entry))


def _split(entry: str) -> tuple[str, str]:
    if entry.startswith("["):
        host, bracket, rest = entry[1:].partition("]")
        if bracket and rest.startswith(":"):
            return host, rest[1:]
    elif entry.count(":") == 1:
        host, _, port = entry.partition(":")
        return host, port
    raise NetworkSpecError(
        f"'{entry}' is not HOST:PORT (e.g. pypi.org:443, 10.0.0.5:8080, [::1]:8080)"
    )


def _checked_host(host: str, entry: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if len(host) > 253 or not _HOST_NAME.fullmatch(host) or host.replace(".", "").isdigit():
        raise NetworkSpecError(f"'{entry}' names no valid host name or IP address")
    return host.lower().rstrip(".")


def _checked_port(port: str, entry: str) -> int:
    if not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
        raise NetworkSpecError(f"'{entry}' has no port from 1 to 65535")
    return int(port)
