"""Which sandbox a run uses and what each scenario asks of it, and the refusal to run agent
commands or model-written code on the host unless the user allows it (`--allow-unsandboxed`)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from benchyard.errors import BenchyardError
from benchyard.sandbox.base import Sandbox
from benchyard.sandbox.limits import (
    DEFAULT_MAX_PROCESSES,
    DEFAULT_MEMORY_MB,
    ResourceLimits,
    SandboxRequest,
)
from benchyard.sandbox.registry import SandboxOptions, build_sandbox

if TYPE_CHECKING:
    from benchyard.agents.base import Agent
    from benchyard.runner.execute import RunSettings
    from benchyard.spec.loader import Benchmark
    from benchyard.spec.models import Scenario


class UnsandboxedRefused(BenchyardError):
    """Agent commands or model-written code would run on the host without the user's say-so."""


def open_sandbox(settings: RunSettings, benchmark: Benchmark, agent: Agent) -> Sandbox:
    """The run's sandbox, ready: refused when unsandboxed code is not allowed, SandboxUnavailable
    when it cannot work here or a scenario asks for what it cannot give."""
    refuse_unsandboxed(settings, benchmark, agent)
    if not unsandboxed_work(benchmark, agent):
        # Nothing will run in it (an in-process agent, no code checks): skip probing the machine.
        return build_sandbox("none", SandboxOptions((), ()))
    readable = tuple(getattr(agent, "readable_paths", ()))
    sandbox = _opened(settings.sandbox, hidden_paths(settings, benchmark), readable)
    sandbox.check_requests({request_for(benchmark, scenario) for scenario in benchmark.scenarios})
    return sandbox


@functools.lru_cache(maxsize=16)
def _opened(name: str, hidden: tuple[Path, ...], readable: tuple[Path, ...]) -> Sandbox:
    """One sandbox per kind and paths in a process: opening one probes the machine, and a run is
    checked before it is recorded, then opened again by its worker."""
    return build_sandbox(name, SandboxOptions(hidden, readable))


def refuse_unsandboxed(settings: RunSettings, benchmark: Benchmark, agent: Agent) -> None:
    if settings.sandbox != "none" or settings.allow_unsandboxed:
        return
    what = unsandboxed_work(benchmark, agent)
    if what:
        raise UnsandboxedRefused(
            f"refusing to run {what} on this host without a sandbox (--sandbox none); choose "
            "--sandbox bwrap or docker, or pass --allow-unsandboxed to run it unconfined"
        )


def unsandboxed_work(benchmark: Benchmark, agent: Agent) -> str:
    """What this run would execute in its sandbox: agent commands, model-written code, or ''."""
    from benchyard.checks.registry import get_check_type

    code_checks = sorted(
        {
            spec.type
            for scenario in benchmark.scenarios
            for spec in scenario.checks
            if (found := get_check_type(spec.type)) is not None and found.needs_code
        }
    )
    parts = ["agent commands"] if agent.needs_workdir else []
    if code_checks:
        parts.append(f"model-written code (checks: {', '.join(code_checks)})")
    return " and ".join(parts)


def hidden_paths(settings: RunSettings, benchmark: Benchmark) -> tuple[Path, ...]:
    """What a sandbox hides: the benchmark (its references), and the work root (every attempt's
    workdir; the default ones, /dev/shm and /tmp, are private in a sandbox anyway)."""
    hidden = [benchmark.root.resolve()]
    if settings.work_root:
        hidden.append(Path(settings.work_root).resolve())
    return tuple(hidden)


def request_for(
    benchmark: Benchmark, scenario: Scenario, *, network: bool = False
) -> SandboxRequest:
    """The scenario's `sandbox` and `limits`, over its benchmark's, over benchyard's defaults;
    `network` gives the network even where the scenario does not ask for it."""
    asked, general = scenario.sandbox, benchmark.manifest.sandbox
    limits, defaults = scenario.limits, benchmark.manifest.defaults
    asked_network = asked.network if asked.network is not None else general.network
    return SandboxRequest(
        image=asked.image or general.image,
        network=network or bool(asked_network),
        limits=ResourceLimits(
            memory_mb=limits.memory_mb or defaults.memory_mb or DEFAULT_MEMORY_MB,
            max_processes=limits.max_processes or defaults.max_processes or DEFAULT_MAX_PROCESSES,
            cpu_sec=limits.cpu_sec or defaults.cpu_sec,
            cpus=limits.cpus or defaults.cpus,
        ),
    )
