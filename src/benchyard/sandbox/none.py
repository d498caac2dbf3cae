"""The `none` sandbox: the command runs on the host, in its private workdir, with no other confinement.
The runner refuses it for agent commands and model-written code unless the user allows it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from benchyard.sandbox.limits import SandboxRequest
from benchyard.sandbox.process import ProcessOutcome, run_command


class HostProcess:
    name = "none"

    def configured(self, request: SandboxRequest) -> HostProcess:
        return self

    def check_requests(self, requests: Iterable[SandboxRequest]) -> None:
        pass

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
        return await run_command(
            argv, cwd=workdir, env=env, timeout_sec=timeout_sec, output_cap_bytes=output_cap_bytes
        )
