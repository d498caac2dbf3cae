"""`benchyard status`: one line per configured provider (up or down, its round trip, the models it
serves), one per `openai` agent whose model its provider does not list, and one per benchmark
(built-in and under the current directory) with its scenario count by profile."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import ValidationError

from benchyard.config import ProjectConfig
from benchyard.errors import field_problems
from benchyard.providers.config import ProviderConfig
from benchyard.providers.endpoint import EndpointState, look
from benchyard.runner.loop import run_async

SHOWN_MODELS = 8


def provider_lines(
    config: ProjectConfig, timeout_sec: float, down: list[str] | None = None
) -> list[str]:
    """One line per provider (and per agent whose model its provider does not list); the names
    of the providers down or invalid are appended to `down` when given (`status` exits 3)."""
    if not config.providers:
        return ["providers: none declared in benchyard.yaml (see docs/models.md)"]
    names = sorted(config.providers)
    valid: dict[str, ProviderConfig] = {}
    lines: dict[str, str] = {}
    for name in names:
        try:
            valid[name] = ProviderConfig.model_validate(config.providers[name])
        except ValidationError as error:
            lines[name] = f"provider {name}: invalid in benchyard.yaml: {field_problems(error)}"
    states = run_async(_look_all(valid, timeout_sec))
    for name, state in states.items():
        lines[name] = _provider_line(name, state)
    if down is not None:
        down += [name for name in names if name not in states or not states[name].up]
    ordered = [lines[name] for name in names]
    return ordered + _agent_lines(config, states)


async def _look_all(
    providers: dict[str, ProviderConfig], timeout_sec: float
) -> dict[str, EndpointState]:
    found = await asyncio.gather(*(look(p, timeout_sec) for p in providers.values()))
    return dict(zip(providers, found, strict=True))


def _provider_line(name: str, state: EndpointState) -> str:
    if not state.up:
        return f"provider {name}: DOWN at {state.base_url}: {state.problem}"
    latency = f"{state.latency_sec * 1000:,.0f} ms" if state.latency_sec is not None else "?"
    shown = ", ".join(state.models[:SHOWN_MODELS])
    more = (
        f" and {len(state.models) - SHOWN_MODELS} more" if len(state.models) > SHOWN_MODELS else ""
    )
    count = f"{len(state.models)} model{'s' if len(state.models) != 1 else ''}"
    problem = f" ({state.problem})" if state.problem else ""
    return f"provider {name}: up at {state.base_url} ({latency}), {count}: {shown}{more}{problem}"


def _agent_lines(config: ProjectConfig, states: dict[str, EndpointState]) -> list[str]:
    """`openai` agents whose provider is up but does not list their model."""
    lines = []
    for name, agent in sorted(config.agents.items()):
        provider, model = agent.get("provider"), agent.get("model")
        if agent.get("kind") != "openai" or not isinstance(provider, str):
            continue
        state = states.get(provider)
        if state is not None and state.up and state.models and model not in state.models:
            lines.append(f"agent {name}: model '{model}' is not among the models {provider} serves")
    return lines


def benchmark_lines(start: Path) -> list[str]:
    from benchyard.spec.library import builtin_benchmarks, local_benchmarks
    from benchyard.spec.loader import load_benchmark
    from benchyard.spec.problems import BenchmarkInvalid
    from benchyard.spec.profiles import profile_sizes

    entries = [(name, path) for name, path in builtin_benchmarks().items()]
    entries += [(str(path), path) for path in local_benchmarks(start)]
    lines = []
    for label, path in entries:
        try:
            benchmark = load_benchmark(path)
        except BenchmarkInvalid as invalid:
            lines.append(
                f"benchmark {label}: invalid ({len(invalid.problems)} problems; "
                f"`benchyard validate {label}`)"
            )
            continue
        sizes = ", ".join(f"{name} {count}" for name, count in profile_sizes(benchmark).items())
        lines.append(
            f"benchmark {benchmark.name} {benchmark.version}: "
            f"{len(benchmark.scenarios)} scenarios (profiles: {sizes})"
        )
    return lines
