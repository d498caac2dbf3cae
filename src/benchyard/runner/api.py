"""The library entry points that the CLI (and later the web UI and workers) call: choose an agent,
plan a run or a rerun, execute it, and verify a benchmark's references."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchyard.agents.base import Agent
from benchyard.agents.registry import AgentConfigError, build_agent
from benchyard.checks.judge_types import JUDGE_CHECK_TYPES
from benchyard.config import ProjectConfig
from benchyard.runner.execute import ProposedRun, RunObserver, RunSettings, new_run
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.grading import Grade, grade
from benchyard.runner.isolation import refuse_store_url
from benchyard.runner.loop import run_async
from benchyard.runner.plan import Plan, PlannedAttempt, plan_attempts, planned_ids
from benchyard.runner.recorded import (
    RunRefused,
    recorded_agent,
    recorded_benchmark,
    recorded_settings,
)
from benchyard.runner.two_phase import ChangeGrader, needs_two_phase
from benchyard.runner.worker import Log, WorkerOptions, execute_run
from benchyard.spec.filters import select_scenarios
from benchyard.spec.loader import Benchmark
from benchyard.spec.models import Scenario
from benchyard.spec.scenario_index import scenarios_by_id
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

if TYPE_CHECKING:
    from benchyard.executors.base import Executor
    from benchyard.report.outputs import VerifyOutput
    from benchyard.runner.derive import Deriver
    from benchyard.runner.spend import SpendGate

RERUN_VERDICTS = frozenset({"failed", "error", "timeout"})


INLINE_AGENT_NAME = "command"  # an --agent-cmd agent's name unless --agent-name gives one
AGENT_NAME_CHARS = 200  # what the store keeps


def resolve_agent(
    config: ProjectConfig,
    name: str | None,
    command: str | None,
    command_name: str | None = None,
    bridge: str | None = None,
) -> Agent:
    """`--agent NAME` from benchyard.yaml (or the built-in oracle), or an inline `--agent-cmd`,
    named `command_name` (`--agent-name`) so that history and compare can tell agents apart, with
    a model bridge to `bridge` (`--bridge PROVIDER/MODEL`, a provider of benchyard.yaml).
    The secrets benchyard.yaml configures are registered for scrubbing; an agent given the store's
    URL (`db:` or BENCHYARD_DB; the URL actually used is checked again when the run starts) is
    refused."""
    register_secrets(config)
    if command and name:
        raise AgentConfigError("give either --agent or --agent-cmd, not both")
    if command_name is not None and not command:
        raise AgentConfigError(
            "--agent-name names an --agent-cmd agent; an --agent is named in benchyard.yaml"
        )
    if command_name is not None and not (0 < len(command_name.strip()) <= AGENT_NAME_CHARS):
        raise AgentConfigError(
            f"--agent-name takes 1 to {AGENT_NAME_CHARS} characters, found {len(command_name)}"
        )
    if bridge is not None and not command:
        raise AgentConfigError(
            "--bridge gives an --agent-cmd agent its model; an --agent's bridge is declared in "
            "benchyard.yaml"
        )
    if command:
        inline: dict[str, Any] = {"kind": "command", "command": command}
        if bridge is not None:
            inline["bridge"] = _bridge_option(bridge)
        return build_agent(
            (command_name or INLINE_AGENT_NAME).strip(),
            _anchored(_with_provider(inline, config), Path.cwd()),
        )
    if not name:
        raise AgentConfigError(
            "choose an agent: --agent NAME (from benchyard.yaml, or 'oracle') or --agent-cmd '...'"
        )
    if name in config.agents:
        agent_config = _with_provider(config.agents[name], config)
        agent = build_agent(name, _anchored(agent_config, config.base_dir))
        refuse_store_url(agent, config.db)
        return agent
    if name == "oracle":
        return build_agent("oracle", {"kind": "oracle"})
    declared = ", ".join(sorted({*config.agents, "oracle"}))
    raise AgentConfigError(
        f"no agent named '{name}' (declared: {declared}); declare it in benchyard.yaml"
    )


def _bridge_option(given: str) -> dict[str, str]:
    """`--bridge PROVIDER/MODEL` as a bridge's settings (the model may hold slashes itself)."""
    provider, _, model = given.partition("/")
    if not provider.strip() or not model.strip():
        raise AgentConfigError(
            f"--bridge takes PROVIDER/MODEL, a provider of benchyard.yaml and its model; found "
            f"'{given}'"
        )
    return {"provider": provider.strip(), "model": model.strip()}


def _with_provider(agent_config: dict[str, Any], config: ProjectConfig) -> dict[str, Any]:
    """An `openai` agent's config, or a command or preset agent's `bridge`, with its provider and
    price filled in from benchyard.yaml."""
    from benchyard.agents.presets import PRESETS
    from benchyard.providers.config import resolve_model_config

    if agent_config.get("kind") == "openai":
        return resolve_model_config(agent_config, config.providers, config.prices)
    if agent_config.get("kind", "command") not in ("command", *PRESETS):
        return agent_config
    agent_config = _priced(agent_config, config)
    bridge = agent_config.get("bridge")
    if not isinstance(bridge, dict):
        return agent_config
    resolved = resolve_model_config(bridge, config.providers, config.prices)
    return {**agent_config, "bridge": resolved}


def _priced(agent_config: dict[str, Any], config: ProjectConfig) -> dict[str, Any]:
    """A command agent's config with benchyard.yaml's prices, which price the tokens it reports."""
    if not config.prices or "prices" in agent_config:
        return agent_config
    return {**agent_config, "prices": config.prices}


def register_secrets(config: ProjectConfig) -> None:
    """Register for scrubbing the secret values benchyard.yaml points at: providers' keys and
    header variables (also of providers written inline), literal credential headers, and the host
    variables agents are given by `pass_env`."""
    from benchyard import secrets

    declared = [config.judge or {}, *config.agents.values()]
    inline = [d["provider"] for d in declared if isinstance(d.get("provider"), dict)]
    _register_provider_secrets([*config.providers.values(), *inline])
    for agent in config.agents.values():
        names = agent.get("pass_env")
        if isinstance(names, list):
            secrets.register_variables(str(name) for name in names)


def _register_provider_secrets(providers: list[dict[str, Any]]) -> None:
    """Register the providers' secrets; their module is imported only when there are some."""
    if not providers:
        return
    from benchyard.providers.config import register_provider_secrets

    for provider in providers:
        register_provider_secrets(provider)


def recorded_run(run: RunRecord) -> RunRecord:
    """`run` as it is recorded: the values of configured secrets scrubbed from its agent's
    configuration and settings, and the judge's credential headers redacted."""
    from benchyard import secrets

    settings = dict(run.settings)
    if isinstance(settings.get("judge"), dict):
        from benchyard.providers.config import redacted_model_config

        settings["judge"] = redacted_model_config(settings["judge"])
    run.agent_config = secrets.scrub_value(run.agent_config)
    run.settings = secrets.scrub_value(settings)
    return run


def judge_for(config: ProjectConfig) -> dict[str, Any] | None:
    """The judge model declared in benchyard.yaml, as a run records it (None without one: the
    provider client is then not imported)."""
    if config.judge is None:
        return None
    from benchyard.providers.judge import judge_settings

    return judge_settings(config.judge, config.providers, config.prices)


def _anchored(agent_config: dict[str, Any], base: Path) -> dict[str, Any]:
    """A command agent's config with relative script and `readable` paths made absolute (it runs
    in its workdir); a preset's `readable` paths too."""
    from benchyard.agents.command import anchor_relative_paths
    from benchyard.agents.presets import PRESETS

    command = agent_config.get("command")
    if agent_config.get("kind") in PRESETS:
        anchored = dict(agent_config)
    elif agent_config.get("kind", "command") != "command" or not isinstance(command, str):
        return agent_config
    else:
        anchored = {**agent_config, "command": anchor_relative_paths(command, base)}
    readable = agent_config.get("readable")
    if isinstance(readable, list):
        anchored["readable"] = [
            str(base / path) if isinstance(path, str) else path for path in readable
        ]
    return anchored


def plan_run(benchmark: Benchmark, settings: RunSettings) -> Sequence[PlannedAttempt]:
    from benchyard.spec.profiles import select_profile

    profiled = select_profile(benchmark, settings.profile)
    scenarios = select_scenarios(profiled, settings.filters)
    plan = plan_attempts(scenarios, epochs=settings.epochs, limit=settings.limit)
    if not plan:
        within = f" of profile {settings.profile}" if settings.profile else ""
        raise RunRefused(
            f"no scenario{within} of {benchmark.name} matches the filters {list(settings.filters)}"
        )
    if settings.judge is None:
        _refuse_judge_checks(plan)
    return plan


def _refuse_judge_checks(plan: Sequence[PlannedAttempt]) -> None:
    """Judge checks cannot run without a judge model: say so before anything runs (each
    scenario looked at once, whatever the epochs)."""
    for scenario in _planned_scenarios(plan):
        judged = [c.type for c in scenario.checks if c.type in JUDGE_CHECK_TYPES]
        if judged:
            raise RunRefused(
                f"scenario '{scenario.id}' has a {judged[0]} check but no judge model "
                "is configured: add `judge:` to benchyard.yaml (see docs/models.md)"
            )


def execute(
    store: Store,
    benchmark: Benchmark,
    agent: Agent,
    plan: Sequence[PlannedAttempt],
    settings: RunSettings,
    *,
    agent_repo: Path | None = None,
    parent_run_id: str | None = None,
    observer: RunObserver | None = None,
    gate: SpendGate | None = None,
    executor: Executor | None = None,
) -> RunRecord:
    """Record a new run and execute it to the end (or to Ctrl-C, which keeps what finished),
    its tries where `executor` runs them (default: this process). A run whose sandbox is refused
    or cannot work there, or whose agent's command cannot run (runner/preflight.py), stops before
    anything is recorded."""
    from benchyard.executors.local import LocalExecutor

    where = executor or LocalExecutor()
    where.check(ProposedRun(settings, benchmark, agent, store.url, _planned_scenarios(plan)))
    refuse_store_url(agent, store.url)
    if isinstance(where, LocalExecutor):  # elsewhere, this machine's files say nothing
        from benchyard.runner.preflight import refuse_unrunnable_agent

        refuse_unrunnable_agent(agent, settings.sandbox)
    run = recorded_run(new_run(benchmark, agent, settings, len(plan), agent_repo, parent_run_id))
    return run_async(
        execute_run(store, benchmark, agent, plan, run, settings, observer, gate, where)
    )


def enqueue(
    store: Store,
    benchmark: Benchmark,
    agent: Agent,
    plan: Sequence[PlannedAttempt],
    settings: RunSettings,
    *,
    agent_repo: Path | None = None,
    parent_run_id: str | None = None,
) -> RunRecord:
    """Record a new run in the queue, for `benchyard worker` to execute (a rerun of `parent_run_id`
    when given). A worker rebuilds the agent from its recorded configuration, so an agent that
    cannot be rebuilt is refused here."""
    from benchyard.providers.judge import build_judge
    from benchyard.runner.isolation import refuse_unsandboxed
    from benchyard.store.queue import Queue

    # the sandbox itself is the worker's to open
    refuse_unsandboxed(settings, benchmark, agent, _planned_scenarios(plan))
    refuse_store_url(agent, store.url)
    run = recorded_run(new_run(benchmark, agent, settings, len(plan), agent_repo, parent_run_id))
    try:
        build_agent(run.agent_name, run.agent_config)
        build_judge(run.settings.get("judge"))  # opens no connection
    except (AgentConfigError, ValueError) as error:
        raise RunRefused(
            f"{error}: a worker could not rebuild this run from its record; run it inline"
        ) from None
    Queue(store).enqueue(run, planned_ids(plan))
    return run


def _planned_scenarios(plan: Sequence[PlannedAttempt]) -> Sequence[Scenario]:
    """The scenarios a plan runs, each once, in order (of a Plan, as it holds them: each read
    again of a ScenarioIndex is a new object)."""
    if isinstance(plan, Plan):
        return plan.scenarios
    return list({p.scenario.id: p.scenario for p in plan}.values())


def run_worker(
    store: Store, options: WorkerOptions, log: Log | None = None, executor: Executor | None = None
) -> None:
    """Serve the queue in this process until it drains (`options.drain`), or until Ctrl-C or
    SIGTERM, which hand the attempts this worker holds back to the queue; its tries run where
    `executor` runs them (default: this process)."""
    from benchyard.runner.worker import serve_queue

    async def serve() -> None:
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await serve_queue(store, options, log=log, executor=executor)

    run_async(serve())


@dataclass(frozen=True)
class Rerun:
    parent: RunRecord
    benchmark: Benchmark
    agent: Agent
    plan: Sequence[PlannedAttempt]
    settings: RunSettings


def plan_rerun(
    store: Store,
    parent: RunRecord,
    overrides: Mapping[str, object] | None = None,
    *,
    recover: bool = False,
    agent_overrides: Mapping[str, object] | None = None,
) -> Rerun:
    """Plan a run of only the failed, errored and timed-out attempts of `parent` (merged with its
    own parents); with `recover`, only those whose answer was lost to reasoning."""
    from benchyard.report.build import final_attempts

    if parent.kind != "benchmark":
        raise RunRefused(
            f"run {parent.id[:8]} is a {parent.kind} run, with no attempts to re-run; "
            "measure again with `benchyard speed`"
        )
    benchmark = recorded_benchmark(parent)
    to_redo = {
        (attempt.scenario_id, attempt.epoch)
        for attempt in final_attempts(store, store.run_chain(parent))
        if (attempt.failure_kind == FailureKind.REASONING_TRUNCATED)
        or (not recover and attempt.verdict in RERUN_VERDICTS)
    }
    by_id = scenarios_by_id(benchmark.scenarios)
    plan = [PlannedAttempt(by_id[sid], epoch) for sid, epoch in sorted(to_redo) if sid in by_id]
    if not plan:
        wanted = "answer lost to reasoning" if recover else "failed, errored or timed-out attempt"
        raise RunRefused(f"run {parent.id[:8]} has no {wanted} to re-run")
    settings = recorded_settings(parent, overrides)
    agent = (
        build_agent(parent.agent_name, {**parent.agent_config, **agent_overrides})
        if agent_overrides
        else recorded_agent(parent)
    )
    return Rerun(parent, benchmark, agent, plan, settings)


@dataclass(frozen=True)
class VerifyOutcome:
    scenario_id: str
    ok: bool
    reason: str
    executed: bool = False  # the reference's code ran in the sandbox (a coding scenario)
    derived: bool = False  # its `derive` program worked the reference answer out again
    decoys_rejected: int = 0  # known-wrong answers that failed, as they must
    haystack: bool = False  # its long text was regenerated from its seed (and its sha256 held)


def verify_lanes() -> int:
    """How many scenarios `verify` grades at once by default: the CPUs this process may use.
    Grading runs the benchmark's own code, and a reference must beat its time limit (a decoy
    often runs into it on purpose): more at once would starve the references of CPU."""
    if hasattr(os, "sched_getaffinity"):  # Linux: the CPUs this process may run on
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def verify_benchmark(
    benchmark: Benchmark, sandbox: str | None = None, concurrency: int | None = None
) -> list[VerifyOutcome]:
    """Grade every scenario's reference with its own checks; a failing reference is a broken case.
    Coding scenarios go through both phases, their code run in `sandbox` (the run's default). A
    scenario's `derive` program must work its reference answer out again, and each of its
    `decoys` (known-wrong answers) must fail its checks. `concurrency` scenarios (verify_lanes by
    default) are verified at once; the outcomes come in the benchmark's order."""
    from benchyard.runner.derive import Deriver

    settings = RunSettings(sandbox=sandbox) if sandbox else RunSettings()
    with ChangeGrader(benchmark, settings) as grader, Deriver(benchmark, settings) as deriver:
        return run_async(_verify_all(benchmark, grader, deriver, concurrency or verify_lanes()))


def verify_benchmark_at(
    path: str, sandbox: str | None = None, concurrency: int | None = None
) -> VerifyOutput:
    """`verify --format json`: every reference of the benchmark at `path` graded, or the
    benchmark's problems when it has some. A path that is no benchmark at all raises."""
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.report.outputs import verify_output
    from benchyard.spec.problems import BenchmarkInvalid

    try:
        benchmark = load_benchmark(path)
    except BenchmarkInvalid as invalid:
        return verify_output(path, None, [], invalid.problems)
    return verify_output(path, benchmark, verify_benchmark(benchmark, sandbox, concurrency))


async def _verify_all(
    benchmark: Benchmark, grader: ChangeGrader, deriver: Deriver, concurrency: int
) -> list[VerifyOutcome]:
    # `concurrency` lanes take the scenarios from one iterator in turn, so that no more than that
    # many are loaded at once (scenarios are read lazily); each outcome lands at its index.
    found: dict[int, VerifyOutcome] = {}
    queue = enumerate(benchmark.scenarios)

    async def lane() -> None:
        for index, scenario in queue:
            outcome = await _verify_reference(scenario, grader)
            if outcome.ok:
                outcome = await _verify_more(scenario, grader, deriver, outcome)
            found[index] = outcome

    await asyncio.gather(*(lane() for _ in range(concurrency)))
    return [found[index] for index in range(len(found))]


async def _grade_answer(scenario: Scenario, grader: ChangeGrader) -> Grade:
    """The scenario's reference (or a decoy put in its place) graded as the oracle's attempt."""
    from benchyard.agents.oracle import reference_trajectory

    answers = scenario.reference_answers() or []
    trajectory = reference_trajectory(scenario)
    if needs_two_phase(scenario):
        return await grader.grade_reference(scenario, answers, trajectory)
    return await grade(scenario, answers, trajectory, None)


async def _verify_reference(scenario: Scenario, grader: ChangeGrader) -> VerifyOutcome:
    if scenario.reference_answers() is None:
        return VerifyOutcome(scenario.id, False, "no reference")
    try:
        result = await _grade_answer(scenario, grader)
    except AttemptFailure as failure:
        return VerifyOutcome(scenario.id, False, failure.message)
    return VerifyOutcome(
        scenario.id,
        result.passed,
        result.cause or "reference passes",
        executed=needs_two_phase(scenario),
        haystack=scenario.stimulus.haystack is not None,
    )


async def _verify_more(
    scenario: Scenario, grader: ChangeGrader, deriver: Deriver, outcome: VerifyOutcome
) -> VerifyOutcome:
    """The derivation and the decoys of a scenario whose reference passes."""
    from dataclasses import replace

    from benchyard.runner.derive import same_answer, shown

    if scenario.derive is not None:
        expected = (scenario.reference_answers() or [""])[-1]
        try:
            derived = await deriver.derive(scenario)
        except AttemptFailure as failure:
            return replace(outcome, ok=False, reason=failure.message)
        if not same_answer(derived, expected):
            return replace(
                outcome,
                ok=False,
                reason=f"derive worked out {shown(derived)!r} but the reference says "
                f"{shown(expected)!r}",
            )
        outcome = replace(outcome, derived=True)
    for index, decoy in enumerate(scenario.decoys, start=1):
        try:
            result = await _grade_answer(scenario.model_copy(update={"reference": decoy}), grader)
        except AttemptFailure as failure:
            return replace(
                outcome, ok=False, reason=f"decoy {index} could not be graded: {failure.message}"
            )
        if result.passed:
            return replace(
                outcome,
                ok=False,
                reason=f"decoy {index} (a known-wrong answer) passes its checks: they do not "
                "tell it from the reference",
            )
        outcome = replace(outcome, decoys_rejected=outcome.decoys_rejected + 1)
    return outcome
