"""The sandbox interface: run one command for an attempt, confined to its workdir."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from benchyard.sandbox.process import ProcessOutcome


class Sandbox(Protocol):
    name: str

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
