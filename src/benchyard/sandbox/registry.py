"""Registry of sandboxes, chosen per run with `--sandbox`; other packages add theirs through the
`benchyard.sandboxes` entry-point group (each entry point is a factory `() -> Sandbox`)."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

from benchyard.errors import BenchyardError
from benchyard.sandbox.base import Sandbox

ENTRY_POINT_GROUP = "benchyard.sandboxes"
SandboxFactory = Callable[[], Sandbox]


class SandboxUnavailable(BenchyardError):
    """The sandbox asked for does not exist or cannot work on this machine."""


def _none() -> Sandbox:
    from benchyard.sandbox.none import HostProcess

    return HostProcess()


BUILTIN_SANDBOXES: dict[str, SandboxFactory] = {"none": _none}


def sandbox_names() -> list[str]:
    return sorted(
        {*BUILTIN_SANDBOXES, *(entry.name for entry in entry_points(group=ENTRY_POINT_GROUP))}
    )


def build_sandbox(name: str) -> Sandbox:
    factory = BUILTIN_SANDBOXES.get(name)
    if factory is None:
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            if entry.name == name:
                factory = entry.load()
    if factory is None:
        raise SandboxUnavailable(f"unknown sandbox '{name}' (known: {', '.join(sandbox_names())})")
    return factory()
