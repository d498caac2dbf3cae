"""What each attempt asks of the Ray cluster, and the gate that keeps no more attempts in flight
than the cluster can run.

An attempt asks for `limits.cpus` CPUs (1 unless the scenario or its benchmark says), the memory
of `limits.memory_mb` when it is declared (the sandbox's default limit is not reserved: it caps,
it does not need), and each of `limits.resources` (`gpu` is Ray's `GPU`; `docker`, or any name of
your own, is a custom resource that nodes declare with `ray start --resources`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchyard.spec.loader import Benchmark
from benchyard.spec.models import Scenario

DEFAULT_CPUS = 1.0
REFRESH_SEC = 2.0  # how often a waiting gate looks at the cluster's resources again
RAY_NAMES = {"gpu": "GPU", "cpu": "CPU"}  # the spec's lower-case names for Ray's built-ins
EPSILON = 1e-9


@dataclass(frozen=True)
class Ask:
    """What one attempt needs, in Ray's resource names (CPU, GPU, memory in bytes, custom)."""

    amounts: tuple[tuple[str, float], ...]

    @classmethod
    def of(cls, amounts: Mapping[str, float]) -> Ask:
        return cls(tuple(sorted((name, value) for name, value in amounts.items() if value > 0)))

    def as_dict(self) -> dict[str, float]:
        return dict(self.amounts)

    def ray_options(self) -> dict[str, Any]:
        """Keyword arguments of `RemoteFunction.options` that ask for these resources."""
        wanted = self.as_dict()
        options: dict[str, Any] = {"num_cpus": wanted.pop("CPU", 0.0)}
        if "GPU" in wanted:
            options["num_gpus"] = wanted.pop("GPU")
        if "memory" in wanted:
            options["memory"] = wanted.pop("memory")
        if wanted:
            options["resources"] = wanted
        return options

    def describe(self) -> str:
        shown = []
        for name, value in self.amounts:
            if name == "memory":
                shown.append(f"memory {value / 2**20:g} MB")
            else:
                shown.append(f"{name} {value:g}")
        return ", ".join(shown)


def ask_for(benchmark: Benchmark, scenario: Scenario) -> Ask:
    """The scenario's `limits` over its benchmark's `defaults`, as a Ray resource request."""
    limits, defaults = scenario.limits, benchmark.manifest.defaults
    amounts: dict[str, float] = {"CPU": limits.cpus or defaults.cpus or DEFAULT_CPUS}
    memory_mb = limits.memory_mb or defaults.memory_mb
    if memory_mb:
        amounts["memory"] = float(memory_mb * 2**20)
    for name, value in (limits.resources or defaults.resources).items():
        amounts[RAY_NAMES.get(name, name)] = float(value)
    return Ask.of(amounts)


def fits_somewhere(ask: Ask, nodes: Sequence[Mapping[str, float]]) -> bool:
    """Whether one node, when idle, could run an attempt that asks this."""
    return any(all(node.get(k, 0.0) + EPSILON >= v for k, v in ask.amounts) for node in nodes)


def slots(totals: Mapping[str, float], ask: Ask) -> int:
    """How many attempts asking `ask` the cluster could run at once (by its totals)."""
    counts = [math.floor(totals.get(k, 0.0) / v + EPSILON) for k, v in ask.amounts if v > 0]
    return max(0, min(counts, default=0))


@dataclass
class Gate:
    """Admits an attempt only while the sum of what the admitted ones asked, plus its own ask,
    stays within the cluster's live totals (`totals`, read again every REFRESH_SEC while anyone
    waits): beyond that, attempts wait here in the worker, never as tasks queued in Ray. A node
    that dies lowers the totals, one that joins raises them."""

    totals: Callable[[], Mapping[str, float]]
    used: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    in_flight: int = 0
    _known: Mapping[str, float] = field(default_factory=dict)
    _read_at: float = 0.0
    _changed: asyncio.Condition | None = None

    def _fits(self, ask: Ask) -> bool:
        if time.monotonic() - self._read_at > REFRESH_SEC:
            self._known = dict(self.totals())
            self._read_at = time.monotonic()
        return all(self.used[k] + v <= self._known.get(k, 0.0) + EPSILON for k, v in ask.amounts)

    @contextlib.asynccontextmanager
    async def held(self, ask: Ask) -> AsyncIterator[None]:
        if self._changed is None:
            self._changed = asyncio.Condition()
        changed = self._changed
        async with changed:
            while not self._fits(ask):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), REFRESH_SEC)
            for name, value in ask.amounts:
                self.used[name] += value
            self.in_flight += 1
        try:
            yield
        finally:
            async with changed:
                for name, value in ask.amounts:
                    self.used[name] -= value
                self.in_flight -= 1
                changed.notify_all()
