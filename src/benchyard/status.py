"""`benchyard status`: one line per configured provider (up or down, its round trip, the models it
serves), one per `openai` agent whose model its provider does not list, and one per benchmark
(built-in and under the current directory) with its scenario count by profile. `project_status`
gathers it as a model (report/outputs.py: what `--format json` prints); `status_lines` prints it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import ValidationError

from benchyard.config import ProjectConfig
from benchyard.errors import field_problems
from benchyard.providers.config import ProviderConfig
from benchyard.providers.endpoint import EndpointState, look
from benchyard.report.outputs import (
    AgentModelMissing,
    BenchmarkStatus,
    ProviderStatus,
    StatusOutput,
)
from benchyard.runner.loop import run_async

SHOWN_MODELS = 8


def project_status(config: ProjectConfig, timeout_sec: float, start: Path) -> StatusOutput:
    """Every provider looked at (at most `timeout_sec` each), and every benchmark's size."""
    providers, missing = provider_statuses(config, timeout_sec)
    return StatusOutput(
        providers=providers,
        agents_missing_models=missing,
        benchmarks=benchmark_statuses(start),
        down=[p.name for p in providers if not p.up],
    )


def status_lines(status: StatusOutput) -> list[str]:
    """`benchyard status`'s table: a line per provider, per agent, per benchmark."""
    lines = [_provider_line(p) for p in status.providers] or [
        "providers: none declared in benchyard.yaml (see docs/models.md)"
    ]
    lines += [
        f"agent {a.name}: model '{a.model}' is not among the models {a.provider} serves"
        for a in status.agents_missing_models
    ]
    return lines + [_benchmark_line(b) for b in status.benchmarks]


def provider_statuses(
    config: ProjectConfig, timeout_sec: float
) -> tuple[list[ProviderStatus], list[AgentModelMissing]]:
    """Each provider by name (invalid ones too), and the `openai` agents whose model its provider
    does not list."""
    names = sorted(config.providers)
    valid: dict[str, ProviderConfig] = {}
    invalid: dict[str, str] = {}
    for name in names:
        try:
            valid[name] = ProviderConfig.model_validate(config.providers[name])
        except ValidationError as error:
            invalid[name] = field_problems(error)
    states = run_async(_look_all(valid, timeout_sec)) if valid else {}
    statuses = []
    for name in names:
        state = states.get(name)
        if state is None:
            statuses.append(
                ProviderStatus(
                    name=name,
                    valid=False,
                    up=False,
                    base_url=None,
                    latency_sec=None,
                    models=[],
                    problem=invalid.get(name, "not looked at"),
                )
            )
            continue
        statuses.append(
            ProviderStatus(
                name=name,
                valid=True,
                up=state.up,
                base_url=state.base_url,
                latency_sec=state.latency_sec,
                models=list(state.models),
                problem=state.problem,
            )
        )
    return statuses, _agents_missing_models(config, states)


async def _look_all(
    providers: dict[str, ProviderConfig], timeout_sec: float
) -> dict[str, EndpointState]:
    found = await asyncio.gather(*(look(p, timeout_sec) for p in providers.values()))
    return dict(zip(providers, found, strict=True))


def _provider_line(provider: ProviderStatus) -> str:
    name = provider.name
    if not provider.valid:
        return f"provider {name}: invalid in benchyard.yaml: {provider.problem}"
    if not provider.up:
        return f"provider {name}: DOWN at {provider.base_url}: {provider.problem}"
    latency = f"{provider.latency_sec * 1000:,.0f} ms" if provider.latency_sec is not None else "?"
    models = provider.models
    shown = ", ".join(models[:SHOWN_MODELS])
    more = f" and {len(models) - SHOWN_MODELS} more" if len(models) > SHOWN_MODELS else ""
    count = f"{len(models)} model{'s' if len(models) != 1 else ''}"
    problem = f" ({provider.problem})" if provider.problem else ""
    return (
        f"provider {name}: up at {provider.base_url} ({latency}), {count}: {shown}{more}{problem}"
    )


def _agents_missing_models(
    config: ProjectConfig, states: dict[str, EndpointState]
) -> list[AgentModelMissing]:
    """`openai` agents whose provider is up but does not list their model."""
    missing = []
    for name, agent in sorted(config.agents.items()):
        provider, model = agent.get("provider"), agent.get("model")
        if agent.get("kind") != "openai" or not isinstance(provider, str):
            continue
        state = states.get(provider)
        if state is not None and state.up and state.models and model not in state.models:
            missing.append(
                AgentModelMissing(
                    name=name, provider=provider, model=None if model is None else str(model)
                )
            )
    return missing


def benchmark_statuses(start: Path) -> list[BenchmarkStatus]:
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.spec.library import builtin_benchmarks, local_benchmarks
    from benchyard.spec.problems import BenchmarkInvalid
    from benchyard.spec.profiles import profile_sizes

    entries = [(name, path) for name, path in builtin_benchmarks().items()]
    entries += [(str(path), path) for path in local_benchmarks(start)]
    statuses = []
    for label, path in entries:
        try:
            benchmark = load_benchmark(path)
        except BenchmarkInvalid as invalid:
            statuses.append(
                BenchmarkStatus(
                    label=label,
                    valid=False,
                    name=None,
                    version=None,
                    scenarios=None,
                    profiles={},
                    problems=len(invalid.problems),
                )
            )
            continue
        statuses.append(
            BenchmarkStatus(
                label=label,
                valid=True,
                name=benchmark.name,
                version=benchmark.version,
                scenarios=len(benchmark.scenarios),
                profiles=dict(profile_sizes(benchmark)),
                problems=None,
            )
        )
    return statuses


def _benchmark_line(benchmark: BenchmarkStatus) -> str:
    if not benchmark.valid:
        return (
            f"benchmark {benchmark.label}: invalid ({benchmark.problems} problems; "
            f"`benchyard validate {benchmark.label}`)"
        )
    sizes = ", ".join(f"{name} {count}" for name, count in benchmark.profiles.items())
    return (
        f"benchmark {benchmark.name} {benchmark.version}: "
        f"{benchmark.scenarios} scenarios (profiles: {sizes})"
    )
