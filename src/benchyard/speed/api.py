"""`benchyard speed` as a library call: resolve the `openai` agent, learn about its endpoint, record
a run of kind `speed`, measure, and store every call as it finishes."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from benchyard import __version__
from benchyard.agents.registry import AgentConfigError
from benchyard.config import ProjectConfig
from benchyard.providers.config import ModelConfig
from benchyard.runner.loop import run_async
from benchyard.runner.provenance import git_state, host_name
from benchyard.speed.hardware import bandwidth_gbs
from benchyard.speed.measure import Measurer, SpeedRefused, measuring_config, planned_calls
from benchyard.speed.models import SPEED_PROTOCOL, Environment, Sample, SpeedOptions
from benchyard.speed.records import SPEED_KIND, end_run, record_samples
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

SPEED_BENCHMARK = "speed"


@dataclass(frozen=True)
class SpeedAgent:
    name: str
    config: ModelConfig
    recorded: dict[str, object]  # the agent's settings as a run records them (redacted)


def resolve_speed_agent(config: ProjectConfig, name: str) -> SpeedAgent:
    """An `openai` agent of benchyard.yaml: the one kind whose endpoint can be timed."""
    from benchyard.agents.openai import OpenAIAgent
    from benchyard.runner.api import resolve_agent

    agent = resolve_agent(config, name, None)
    if not isinstance(agent, OpenAIAgent):
        kind = config.agents.get(name, {}).get("kind", "command") if name != "oracle" else "oracle"
        raise AgentConfigError(
            f"agent '{name}' is of kind {kind}: `benchyard speed` times a model behind an "
            "OpenAI-compatible endpoint, an agent of kind openai (see docs/speed.md)"
        )
    return SpeedAgent(name, agent.config, agent.describe())


def protocol_hash(options: SpeedOptions) -> str:
    """What makes two speed runs comparable: the prompts' lengths, the reply's budget, the sweep's
    levels and whether prompts repeat (not the number of repeats)."""
    shape = {
        "lengths": options.lengths,
        "max_tokens": options.max_tokens,
        "concurrency": options.concurrency,
        "level_length": options.level_length,
        "same_prompt": options.same_prompt,
    }
    return "sha256:" + hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()


def measure_speed(
    store: Store,
    agent: SpeedAgent,
    options: SpeedOptions,
    *,
    agent_repo: Path,
    on_call: Callable[[], None] = lambda: None,
    on_start: Callable[[RunRecord], None] = lambda run: None,
) -> RunRecord:
    """Measure, recording the run and its samples; Ctrl-C keeps what was measured (interrupted)."""
    config = measuring_config(agent.config, options)
    return run_async(_measure(store, agent, config, options, agent_repo, on_call, on_start))


async def _measure(
    store: Store,
    agent: SpeedAgent,
    config: ModelConfig,
    options: SpeedOptions,
    agent_repo: Path,
    on_call: Callable[[], None],
    on_start: Callable[[RunRecord], None],
) -> RunRecord:
    from benchyard.runner.api import recorded_run

    environment = await _environment(config, options)
    run = recorded_run(_new_run(agent, options, environment, agent_repo))
    store.create_run(run)
    on_start(run)

    def sink(samples: list[Sample]) -> None:
        record_samples(store, run.id, samples)

    measurer = Measurer(config, options, sink, on_call)
    status, reason = "finished", None
    try:
        await measurer.run()
    except SpeedRefused as refused:
        status, reason = "failed", str(refused)
        raise
    except BaseException:
        status, reason = "interrupted", "stopped before the measurements were complete"
        raise
    finally:
        await measurer.aclose()
        end_run(store, run.id, status, reason)
        run.status, run.status_reason = status, reason
    return store.get_run(run.id)


async def _environment(config: ModelConfig, options: SpeedOptions) -> Environment:
    from benchyard.providers.endpoint import model_file_size, round_trip_sec

    provider = config.provider
    size: int | None = None
    size_source: str | None = None
    if options.model_size_gb is not None:
        size, size_source = int(options.model_size_gb * 1e9), "--model-size-gb"
    else:
        found = await model_file_size(provider, config.model)
        if found is not None:
            size, size_source = found
    bandwidth: float | None = None
    bandwidth_source: str | None = None
    if options.bandwidth_gbs is not None:
        bandwidth, bandwidth_source = options.bandwidth_gbs * 1e9, "--bandwidth-gbs"
    elif options.hardware is not None:
        bandwidth = bandwidth_gbs(options.hardware) * 1e9
        bandwidth_source = f"hardware profile {options.hardware}"
    return Environment(
        base_url=provider.shown_url(),
        model=config.model,
        rtt_sec=await round_trip_sec(provider),
        model_size_bytes=size,
        model_size_source=size_source,
        bandwidth_bytes_per_sec=bandwidth,
        bandwidth_source=bandwidth_source,
    )


def _new_run(
    agent: SpeedAgent, options: SpeedOptions, environment: Environment, agent_repo: Path
) -> RunRecord:
    git = git_state(agent_repo)
    return RunRecord(
        id=uuid.uuid4().hex[:16],
        status="running",
        benchmark_name=SPEED_BENCHMARK,
        benchmark_version=SPEED_PROTOCOL,
        benchmark_hash=protocol_hash(options),
        benchmark_path="",
        agent_name=agent.name,
        agent_config=dict(agent.recorded),
        agent_commit=git.commit,
        agent_dirty=git.dirty,
        agent_repo=git.repo,
        settings={
            "speed": options.model_dump(mode="json"),
            "environment": environment.model_dump(mode="json"),
        },
        benchyard_version=__version__,
        host=host_name(),
        started_at=datetime.now(UTC),
        planned_attempts=planned_calls(options),
        kind=SPEED_KIND,
    )
