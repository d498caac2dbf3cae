"""The library entry points that the CLI (and later the web UI and workers) call: choose an agent,
plan a run or a rerun, execute it, and verify a benchmark's references."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchyard.agents.base import Agent
from benchyard.agents.registry import AgentConfigError, build_agent
from benchyard.config import ProjectConfig
from benchyard.errors import BenchyardError
from benchyard.runner.execute import RunObserver, RunSettings, execute_run, new_run
from benchyard.runner.failures import AttemptFailure
from benchyard.runner.grading import grade
from benchyard.runner.plan import PlannedAttempt, plan_attempts, select_scenarios
from benchyard.spec.loader import Benchmark, load_benchmark
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

RERUN_VERDICTS = frozenset({"failed", "error", "timeout"})


class RunRefused(BenchyardError):
    """A run that cannot start as asked (nothing to run, a changed benchmark, ...)."""


def resolve_agent(config: ProjectConfig, name: str | None, command: str | None) -> Agent:
    """`--agent NAME` from benchyard.yaml (or the built-in oracle), or an inline `--agent-cmd`."""
    if command and name:
        raise AgentConfigError("give either --agent or --agent-cmd, not both")
    if command:
        return build_agent(
            "command", _anchored({"kind": "command", "command": command}, Path.cwd())
        )
    if not name:
        raise AgentConfigError(
            "choose an agent: --agent NAME (from benchyard.yaml, or 'oracle') or --agent-cmd '...'"
        )
    if name in config.agents:
        return build_agent(name, _anchored(config.agents[name], config.base_dir))
    if name == "oracle":
        return build_agent("oracle", {"kind": "oracle"})
    declared = ", ".join(sorted({*config.agents, "oracle"}))
    raise AgentConfigError(
        f"no agent named '{name}' (declared: {declared}); declare it in benchyard.yaml"
    )


def _anchored(agent_config: dict[str, Any], base: Path) -> dict[str, Any]:
    """A command agent's config with relative script paths made absolute (it runs in its workdir)."""
    from benchyard.agents.command import anchor_relative_paths

    command = agent_config.get("command")
    if agent_config.get("kind", "command") != "command" or not isinstance(command, str):
        return agent_config
    return {**agent_config, "command": anchor_relative_paths(command, base)}


def plan_run(benchmark: Benchmark, settings: RunSettings) -> list[PlannedAttempt]:
    scenarios = select_scenarios(benchmark.scenarios, settings.filters)
    plan = plan_attempts(scenarios, epochs=settings.epochs, limit=settings.limit)
    if not plan:
        raise RunRefused(
            f"no scenario of {benchmark.name} matches the filters {list(settings.filters)}"
        )
    return plan


def execute(
    store: Store,
    benchmark: Benchmark,
    agent: Agent,
    plan: list[PlannedAttempt],
    settings: RunSettings,
    *,
    agent_repo: Path,
    parent_run_id: str | None = None,
    observer: RunObserver | None = None,
) -> RunRecord:
    """Record a new run and execute it to the end (or to Ctrl-C, which keeps what finished)."""
    run = new_run(benchmark, agent, settings, len(plan), agent_repo, parent_run_id)
    _use_pidfd_child_watcher()
    return asyncio.run(execute_run(store, benchmark, agent, plan, run, settings, observer))


def _use_pidfd_child_watcher() -> None:
    """Python 3.11 waits for each child in a thread of its own; pidfds cost far less (3.12 does this itself)."""
    if sys.version_info < (3, 12) and hasattr(os, "pidfd_open"):
        with contextlib.suppress(OSError, NotImplementedError):
            os.close(os.pidfd_open(os.getpid()))
            asyncio.set_child_watcher(asyncio.PidfdChildWatcher())


@dataclass(frozen=True)
class Rerun:
    parent: RunRecord
    benchmark: Benchmark
    agent: Agent
    plan: list[PlannedAttempt]
    settings: RunSettings


def plan_rerun(
    store: Store, parent: RunRecord, overrides: Mapping[str, object] | None = None
) -> Rerun:
    """Plan a run of only the failed, errored and timed-out attempts of `parent` (merged with its own parents)."""
    from benchyard.report.build import final_attempts

    benchmark = load_benchmark(parent.benchmark_path)
    if benchmark.content_hash != parent.benchmark_hash:
        raise RunRefused(
            f"the benchmark at {parent.benchmark_path} changed since run {parent.id[:8]} "
            f"({parent.benchmark_hash[:19]} -> {benchmark.content_hash[:19]}); start a new run instead"
        )
    to_redo = {
        (attempt.scenario_id, attempt.epoch)
        for attempt in final_attempts(store, store.run_chain(parent))
        if attempt.verdict in RERUN_VERDICTS
    }
    by_id = {scenario.id: scenario for scenario in benchmark.scenarios}
    plan = [PlannedAttempt(by_id[sid], epoch) for sid, epoch in sorted(to_redo) if sid in by_id]
    if not plan:
        raise RunRefused(
            f"run {parent.id[:8]} has no failed, errored or timed-out attempt to re-run"
        )
    known = set(RunSettings.__dataclass_fields__)
    recorded = {key: value for key, value in parent.settings.items() if key in known}
    recorded["filters"] = tuple(recorded.get("filters", ()))
    settings = RunSettings(**{**recorded, **(overrides or {})})
    agent = build_agent(parent.agent_name, parent.agent_config)
    return Rerun(parent, benchmark, agent, plan, settings)


@dataclass(frozen=True)
class VerifyOutcome:
    scenario_id: str
    ok: bool
    reason: str


def verify_benchmark(benchmark: Benchmark) -> list[VerifyOutcome]:
    """Grade every scenario's reference with its own checks; a failing reference is a broken case."""
    outcomes = []
    for scenario in benchmark.scenarios:
        answers = scenario.reference_answers()
        if answers is None:
            outcomes.append(VerifyOutcome(scenario.id, False, "no reference"))
            continue
        try:
            result = grade(scenario, answers, [], None)
        except AttemptFailure as failure:
            outcomes.append(VerifyOutcome(scenario.id, False, failure.message))
            continue
        outcomes.append(
            VerifyOutcome(scenario.id, result.passed, result.cause or "reference passes")
        )
    return outcomes
