"""What one scenario asks of its sandbox (image, network, resource limits), and the shell lines
that set the per-process limits inside a sandbox."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from benchyard.sandbox.network import Egress

DEFAULT_MEMORY_MB = 2048
DEFAULT_MAX_PROCESSES = 512


@dataclass(frozen=True)
class ResourceLimits:
    memory_mb: int = DEFAULT_MEMORY_MB  # everything the attempt runs, together
    max_processes: int = DEFAULT_MAX_PROCESSES  # processes and threads at once
    cpu_sec: float | None = None  # CPU time of each process
    cpus: float | None = None  # cores at once (docker)

    def describe_memory(self) -> str:
        return f"memory limit of {self.memory_mb} MB"

    def describe_processes(self) -> str:
        return f"process limit of {self.max_processes}"


@dataclass(frozen=True)
class SandboxRequest:
    """What one scenario asks of its sandbox: merged from the scenario, its benchmark and defaults."""

    image: str | None = None  # the docker sandbox's image; None: the sandbox's default image
    network: bool = False  # the host's network shared (`--network all`, a scenario's `network`)
    bridge: bool = True  # an agent's model bridge may be served (`--network` bridge or all)
    egress: Egress | None = None  # the destinations `--network HOST:PORT,...` names, by proxy
    limits: ResourceLimits = field(default_factory=ResourceLimits)


def ulimit_lines(limits: ResourceLimits, *, address_space: bool, process_count: bool) -> list[str]:
    """`ulimit` commands for a POSIX shell: CPU time, and what no cgroup enforces: the address
    space (for `memory_mb`) and the process count. RLIMIT_NPROC counts every process of the user,
    in every sandbox at once, so it stands in for a cgroup only where there is none. `-u` is bash's
    and busybox's flag, `-p` dash's."""
    lines = []
    if limits.cpu_sec is not None:
        lines.append(f"ulimit -t {math.ceil(limits.cpu_sec)}")
    if address_space:
        lines.append(f"ulimit -v {limits.memory_mb * 1024}")
    if process_count:
        lines.append(
            f"ulimit -u {limits.max_processes} 2>/dev/null || ulimit -p {limits.max_processes}"
        )
    return lines
