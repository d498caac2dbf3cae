"""What one web server serves, and how it lets people in."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from benchyard.config import ProjectConfig

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or name to bind) reaches only this machine."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class WebConfig:
    """One server: its store, where it listens, whether it may change anything, whether it may
    queue runs that execute code unsandboxed, and the hash of the token that lets people in
    (required on every address, loopback included: anything on this machine, an agent given the
    network among them, can reach a loopback port)."""

    store_url: str
    project: ProjectConfig = field(default_factory=ProjectConfig)
    host: str = "127.0.0.1"
    port: int = 8765
    read_only: bool = False
    token_sha256: str | None = None
    benchmark_dirs: tuple[Path, ...] = ()
    allow_unsandboxed: bool = False  # `serve --allow-unsandboxed`: the queue form may ask for it
    static_copy: bool = False  # pages for `view-bundle` (web/bundle.py): no forms, a static nav
    static_compare: bool = False  # ... whose copy holds a comparison

    def __post_init__(self) -> None:
        if self.token_sha256 is None:
            raise ValueError(f"serving on {self.host} needs a token, loopback included")

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)
