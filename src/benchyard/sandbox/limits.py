"""What one scenario asks of its sandbox (image, network, resource limits), and the per-process
limits (rlimits) that carry them out where a sandbox has no cgroup for them."""

from __future__ import annotations

import math
import resource
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


def process_rlimits(
    limits: ResourceLimits, *, address_space: bool, process_count: bool
) -> list[tuple[int, int]]:
    """(resource, value) pairs, soft and hard limit alike, for the sandbox's first process: CPU
    time, and what no cgroup enforces: the address space (for `memory_mb`) and the process count.
    RLIMIT_NPROC counts every process of the user, in every sandbox at once, so it stands in for a
    cgroup only where there is none."""
    found = []
    if limits.cpu_sec is not None:
        found.append((resource.RLIMIT_CPU, math.ceil(limits.cpu_sec)))
    if address_space:
        found.append((resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024))
    if process_count:
        found.append((resource.RLIMIT_NPROC, limits.max_processes))
    return found
