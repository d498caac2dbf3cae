"""Registry of sandboxes, chosen per run with `--sandbox`; other packages add theirs through the
`benchyard.sandboxes` entry-point group (each entry point is a factory `(SandboxOptions) -> Sandbox`)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points

from benchyard.sandbox.allowlist import HostPaths
from benchyard.sandbox.base import Sandbox, SandboxUnavailable

ENTRY_POINT_GROUP = "benchyard.sandboxes"
__all__ = ["SandboxOptions", "SandboxUnavailable", "build_sandbox", "default_sandbox_name"]


@dataclass(frozen=True)
class SandboxOptions:
    host: HostPaths = field(default_factory=HostPaths)  # what of the host it shows and hides


SandboxFactory = Callable[[SandboxOptions], Sandbox]


def _none(options: SandboxOptions) -> Sandbox:
    from benchyard.sandbox.none import HostProcess

    return HostProcess()


def _bwrap(options: SandboxOptions) -> Sandbox:
    from benchyard.sandbox.bwrap import BubblewrapSandbox

    return BubblewrapSandbox.open(options.host)


def _docker(options: SandboxOptions) -> Sandbox:
    from benchyard.sandbox.docker import DockerSandbox

    return DockerSandbox.open(options.host)


BUILTIN_SANDBOXES: dict[str, SandboxFactory] = {"none": _none, "bwrap": _bwrap, "docker": _docker}


def default_sandbox_name() -> str:
    """`bwrap` on Linux where bubblewrap is installed, else `none` (which the runner refuses for
    agent commands and model-written code unless the user allows it)."""
    return "bwrap" if sys.platform == "linux" and shutil.which("bwrap") else "none"


def why_no_default_sandbox() -> str | None:
    """Why the default sandbox is `none` on this machine, when bubblewrap is what is missing."""
    if sys.platform != "linux" or shutil.which("bwrap"):
        return None
    return (
        "bubblewrap, the default sandbox, is not installed "
        "(`apt-get install bubblewrap`, `dnf install bubblewrap`)"
    )


def sandbox_names() -> list[str]:
    return sorted(
        {*BUILTIN_SANDBOXES, *(entry.name for entry in entry_points(group=ENTRY_POINT_GROUP))}
    )


def build_sandbox(name: str, options: SandboxOptions | None = None) -> Sandbox:
    """The sandbox called `name`, ready to run; SandboxUnavailable when it cannot work here."""
    factory = BUILTIN_SANDBOXES.get(name)
    if factory is None:
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            if entry.name == name:
                factory = entry.load()
    if factory is None:
        raise SandboxUnavailable(f"unknown sandbox '{name}' (known: {', '.join(sandbox_names())})")
    return factory(options or SandboxOptions())
