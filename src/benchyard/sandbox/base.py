"""The sandbox interface: run one command for an attempt, confined to its workdir."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from benchyard.errors import BenchyardError
from benchyard.sandbox.limits import SandboxRequest
from benchyard.sandbox.process import ProcessOutcome

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The PATH of every sandboxed command: the system's programs, never benchyard's own PATH."""


class SandboxUnavailable(BenchyardError):
    """The sandbox asked for does not exist or cannot work on this machine."""


def installed(program: str, missing: str) -> str:
    """The path of `program`; SandboxUnavailable saying `missing` when it is not on PATH."""
    found = shutil.which(program)
    if found is None:
        raise SandboxUnavailable(missing)
    return found


class Sandbox(Protocol):
    @property
    def name(self) -> str:
        """The name `--sandbox` chooses it by."""
        ...

    def configured(self, request: SandboxRequest) -> Sandbox:
        """This sandbox as one scenario asks for it (image, network, limits)."""
        ...

    def check_requests(self, requests: Iterable[SandboxRequest]) -> None:
        """Before a run: raise SandboxUnavailable when a scenario asks for what cannot be given
        (a docker image that is not there), so that the run stops with one clear line."""
        ...

    async def run(
        self,
        argv: list[str],
        *,
        workdir: Path,
        io_dir: Path,
        env: dict[str, str],
        timeout_sec: float,
        output_cap_bytes: int,
    ) -> ProcessOutcome:
        """Run `argv` with `workdir` as its writable cwd and `io_dir` reachable; kill everything at the
        deadline. Raise AttemptFailure(SANDBOX_START, ...) when the sandbox itself cannot start."""
        ...
