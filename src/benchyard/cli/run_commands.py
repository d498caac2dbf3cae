"""Commands that execute runs: run, rerun."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.executor_options import ConcurrencyOption, ExecutorOption, RayAddressOption
from benchyard.cli.options import (
    AllowNetworkOption,
    AllowUnsandboxedOption,
    DbOption,
    NetworkOption,
    OnCrash,
    RunArg,
    SandboxOption,
    check_list_format,
    network_mode,
)
from benchyard.cli.spend_options import (
    BudgetOption,
    ForecastOutOption,
    PilotOnlyOption,
    PilotOption,
    PilotSeedOption,
    spend_gate,
    tell_stopped,
)
from benchyard.report.gate import GateOn

if TYPE_CHECKING:
    from benchyard.config import ProjectConfig
    from benchyard.report.gate import FinalCounts, GateCounts, GateFailure
    from benchyard.report.model import RunReport
    from benchyard.runner.execute import RunObserver, RunSettings
    from benchyard.store.records import RunRecord
    from benchyard.store.store import Store

FailUnderOption = Annotated[
    float | None,
    typer.Option(
        "--fail-under",
        min=0.0,
        max=1.0,
        help="Exit 1 when accuracy (or, with --fail-under-on lower-bound, the lower bound of its "
        "95% Wilson interval) is under this rate, e.g. 0.8; errors count as failures here unless "
        "--fail-under-excludes-errors. A run whose every attempt errored or timed out exits 3 "
        "whatever the rate.",
    ),
]
FailUnderExcludesErrorsOption = Annotated[
    bool,
    typer.Option(
        "--fail-under-excludes-errors",
        help="Leave errors (faults benchyard observed itself) out of what --fail-under compares, "
        "as accuracy in reports does; by default the gate counts them as failures.",
    ),
]
FailUnderOnOption = Annotated[
    GateOn,
    typer.Option("--fail-under-on", help="What --fail-under compares: accuracy, or lower-bound."),
]
AgentRepoOption = Annotated[
    Path | None,
    typer.Option(
        "--agent-repo",
        help="The agent's git repository, for the commit tag (default: the repository of the "
        "script the agent's command runs; for an agent without one, the current directory).",
    ),
]


@dataclass(frozen=True)
class Threshold:
    """What --fail-under asks of a run: the rate, on what, and whether errors count as failures."""

    rate: float | None
    on: GateOn
    errors_excluded: bool = False


@handle_errors
def run(
    benchmark: Annotated[
        str, typer.Argument(help="A benchmark directory or built-in name (e.g. starter).")
    ],
    agent: Annotated[
        str | None,
        typer.Option("--agent", "-a", help="Agent name from benchyard.yaml, or 'oracle'."),
    ] = None,
    agent_cmd: Annotated[
        str | None, typer.Option("--agent-cmd", help="An inline command agent.")
    ] = None,
    agent_name: Annotated[
        str | None,
        typer.Option(
            "--agent-name",
            help="A name for the --agent-cmd agent (default 'command'), so that history and "
            "compare tell agents apart.",
        ),
    ] = None,
    bridge: Annotated[
        str | None,
        typer.Option(
            "--bridge",
            help="PROVIDER/MODEL: give the --agent-cmd agent a model bridge to this provider of "
            "benchyard.yaml (docs/agent-protocol.md#the-model-bridge).",
        ),
    ] = None,
    concurrency: ConcurrencyOption = None,
    epochs: Annotated[int, typer.Option("--epochs", min=1, help="Attempts per scenario.")] = 1,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Run only the first N scenarios.")
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            help="quick, standard, full (the default) or a profile of benchmark.yaml: a subset "
            "that fits a time budget; --filter and --limit then apply within it.",
        ),
    ] = None,
    filters: Annotated[
        list[str] | None,
        typer.Option(
            "--filter",
            "-f",
            help="category:X, tag:X, id:GLOB, difficulty:X, or a bare word matching any; repeatable.",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.001, help="Seconds per attempt (overrides the benchmark)."),
    ] = None,
    max_turns: Annotated[
        int | None, typer.Option("--max-turns", min=1, help="Most turns per attempt.")
    ] = None,
    retries: Annotated[
        int, typer.Option("--retries", min=0, help="Retries of infrastructure errors.")
    ] = 3,
    retry_backoff: Annotated[
        float, typer.Option("--retry-backoff", min=0, help="First retry delay in seconds.")
    ] = 1.0,
    agent_repo: AgentRepoOption = None,
    keep_workdirs: Annotated[
        bool,
        typer.Option(
            "--keep-workdirs", help="Keep each attempt's workdir after the run (and say where)."
        ),
    ] = False,
    work_root: Annotated[
        Path | None,
        typer.Option(
            "--work-root", help="Where attempt workdirs go (default /dev/shm, else $TMPDIR)."
        ),
    ] = None,
    enqueue: Annotated[
        bool,
        typer.Option(
            "--enqueue", help="Queue the run for `benchyard worker` instead of running it."
        ),
    ] = False,
    on_crash: Annotated[
        OnCrash,
        typer.Option(
            "--on-crash", help="When a worker dies mid-run: resume the run, or mark it failed."
        ),
    ] = OnCrash.resume,
    sandbox: SandboxOption = None,
    allow_unsandboxed: AllowUnsandboxedOption = False,
    network: NetworkOption = None,
    allow_network: AllowNetworkOption = False,
    fail_under: FailUnderOption = None,
    fail_under_on: FailUnderOnOption = GateOn.accuracy,
    fail_under_excludes_errors: FailUnderExcludesErrorsOption = False,
    pilot: PilotOption = None,
    pilot_only: PilotOnlyOption = False,
    pilot_seed: PilotSeedOption = 0,
    budget: BudgetOption = None,
    forecast_out: ForecastOutOption = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar and no report.")
    ] = False,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="table (the report, as `benchyard report`) or json (one document on stdout: "
            "the run, its report and the gate it failed; progress stays on stderr).",
        ),
    ] = "table",
    db: DbOption = None,
) -> None:
    """Run a benchmark against an agent; every attempt lands in the store. Exits 0, 1 under
    --fail-under, 3 when every attempt errored or timed out (see docs/exit-codes.md)."""
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.cli.context import load_project, open_store
    from benchyard.cli.executor_options import open_executor
    from benchyard.runner.api import execute, judge_for, plan_run, resolve_agent
    from benchyard.runner.execute import RunSettings, default_work_root
    from benchyard.sandbox.registry import default_sandbox_name

    check_list_format(format)
    if enqueue and (executor != "local" or ray_address):
        raise typer.BadParameter(
            "a queued run executes where its worker runs it: give --executor to `benchyard worker`",
            param_hint="--executor",
        )
    config = load_project()
    _announce_to_webhooks(config)
    chosen = resolve_agent(config, agent, agent_cmd, agent_name, bridge)
    loaded = load_benchmark(benchmark)
    where = open_executor(executor, ray_address)
    concurrency = where.lanes(concurrency)
    settings = RunSettings(
        concurrency=concurrency,
        epochs=epochs,
        limit=limit,
        filters=tuple(filters or ()),
        timeout_sec=timeout,
        max_turns=max_turns,
        retries=retries,
        retry_backoff_sec=retry_backoff,
        keep_workdirs=keep_workdirs,
        work_root=str(work_root) if work_root else default_work_root(),
        judge=judge_for(config),
        on_crash=on_crash.value,
        sandbox=sandbox or default_sandbox_name(),
        allow_unsandboxed=allow_unsandboxed,
        network=network_mode(network, allow_network) or "bridge",
        profile=None if profile == "full" else profile,
    )
    plan = plan_run(loaded, settings)
    plan, gate = spend_gate(  # --pilot, --budget (docs/sre.md#pilot-and-budget)
        plan,
        concurrency,
        pilot=pilot,
        pilot_only=pilot_only,
        pilot_seed=pilot_seed,
        budget=budget,
        enqueue=enqueue,
        forecast_out=forecast_out,
    )
    store = open_store(db, config)
    if enqueue:
        from benchyard.cli.queue_commands import tell_queued
        from benchyard.runner.api import enqueue as enqueue_run

        queued = enqueue_run(store, loaded, chosen, plan, settings, agent_repo=agent_repo)
        if format == "json":
            from benchyard.report.listing import dump_json
            from benchyard.report.outputs import run_outcome

            tell_queued(queued, quiet=True)
            sys.stdout.write(dump_json(run_outcome(queued, None)))
        else:
            tell_queued(queued)
        return
    try:
        _execute_and_report(
            store,
            lambda observer: execute(
                store,
                loaded,
                chosen,
                plan,
                settings,
                agent_repo=agent_repo,
                observer=observer,
                gate=gate,
                executor=where,
            ),
            len(plan),
            quiet,
            settings,
            Threshold(fail_under, fail_under_on, fail_under_excludes_errors),
            stopped=lambda: tell_stopped(gate),
            format=format,
        )
    finally:
        where.close()


def _announce_to_webhooks(config: ProjectConfig) -> None:
    """The run this command's worker ends compared and announced to benchyard.yaml's webhooks
    (automation/hooks.py). Without webhooks that would do nothing (a run executed inline is no
    schedule's: schedules queue theirs), so automation is not even imported."""
    if config.webhooks:
        from benchyard.automation.hooks import listen_to_workers

        listen_to_workers()


def _execute_and_report(
    store: Store,
    start: Callable[[RunObserver], RunRecord],
    total: int,
    quiet: bool,
    settings: RunSettings,
    threshold: Threshold,
    merged: bool = False,
    stopped: Callable[[], None] | None = None,
    format: str = "table",
) -> None:
    """Execute, print the report (with `format` json: the run, its report and its gate as one
    document on stdout, everything else on stderr), say where kept workdirs are, and exit with
    the run's gate: 1 under --fail-under, 3 when nothing could be graded (docs/exit-codes.md)."""
    from benchyard.cli.progress import ProgressObserver

    observer = ProgressObserver(total, enabled=not quiet)
    try:
        with observer:
            finished = start(observer)
    except KeyboardInterrupt:
        from benchyard.report.render import plural

        run_id = observer.run_id or "?"
        typer.echo(
            f"interrupted: run {run_id[:8]} kept {plural(observer.finished, 'finished attempt')} "
            f"(see `benchyard show {run_id[:8]}`)",
            err=True,
        )
        raise typer.Exit(130) from None
    as_json = format == "json"
    report = _report(store, finished) if as_json or not quiet else None
    if report is not None and not as_json:
        from benchyard.cli.render import print_report

        print_report(report)
    if settings.keep_workdirs:
        _tell_kept_workdirs(finished.id, settings.work_root)
    if stopped is not None:
        stopped()  # a pilot or budget stopped the run: say why
    typer.echo(f"run {finished.id}  ({finished.status})", err=as_json)
    failure = run_failure(store, finished, report, threshold, merged=merged)
    if as_json:
        from benchyard.report.listing import dump_json
        from benchyard.report.outputs import run_outcome

        sys.stdout.write(dump_json(run_outcome(finished, report, failure)))
    if failure is not None:
        typer.echo(
            f"{'below threshold' if failure.exit_code == 1 else 'error'}: {failure.message}",
            err=True,
        )
        raise typer.Exit(failure.exit_code)


def run_failure(
    store: Store,
    finished: RunRecord,
    report: RunReport | None,
    threshold: Threshold,
    *,
    merged: bool = False,
) -> GateFailure | None:
    """The first gate the finished run fails (docs/exit-codes.md), read from its `report`, or,
    when none was built (`-q` prints none), from its final attempts' counts where they can say."""
    from benchyard.report.gate import nothing_graded, nothing_started, run_gate

    counts: GateCounts | None = _final_counts(store, finished.id) if report is None else None
    if counts is None:
        report = report or _report(store, finished)
        counts = report.summary
        started = nothing_started(report)
        if started is not None:
            return started
    failure = nothing_graded(counts)
    if failure is None and threshold.rate is not None:
        gated = _report(store, finished, merged=True).summary if merged else counts
        failure = run_gate(
            gated, threshold.rate, threshold.on, errors_excluded=threshold.errors_excluded
        )
    return failure


def _report(store: Store, run: RunRecord, *, merged: bool = False) -> RunReport:
    from benchyard.report.build import build_report

    return build_report(store, run, merged=merged)


def _final_counts(store: Store, run_id: str) -> FinalCounts | None:
    """The run's final attempts counted by verdict, in one query, without its report's models
    and queries; None where only the report can decide: when
    every attempt may have failed to start (it names the first cause), or when an attempt has
    two final tries (counts would count both where it keeps the later)."""
    from benchyard.report.gate import FinalCounts
    from benchyard.store.final_attempts import has_twice_final

    counts = FinalCounts.of(store.final_verdict_kinds(run_id))
    if counts.maybe_none_started or has_twice_final(store, run_id):
        return None
    return counts


def _tell_kept_workdirs(run_id: str, work_root: str | None) -> None:
    from benchyard.report.render import plural
    from benchyard.runner.run_scratch import kept_scratch

    told = False
    for scratch in kept_scratch(run_id, work_root):
        workdirs = sorted(path for path in (scratch / "work").glob("*") if path.is_dir())
        if workdirs:
            told = True
            typer.echo(
                f"kept {plural(len(workdirs), 'workdir')} in {scratch / 'work'} (one per try, "
                f"named by attempt id; the protocol files in {scratch / 'io'}); remove them "
                "when done",
                err=True,
            )
    if not told:
        typer.echo("--keep-workdirs: this run's agent needs no workdir, so none was kept", err=True)


@handle_errors
def rerun(
    run_ref: RunArg,
    failed: Annotated[
        bool, typer.Option("--failed", help="Re-run the failed, errored and timed-out attempts.")
    ] = False,
    recover: Annotated[
        bool,
        typer.Option(
            "--recover", help="Re-run only the attempts whose answer was lost to reasoning."
        ),
    ] = False,
    max_tokens: Annotated[
        int | None,
        typer.Option("--max-tokens", min=1, help="A new token budget for an openai agent."),
    ] = None,
    concurrency: Annotated[int | None, typer.Option("--concurrency", "-j", min=1)] = None,
    agent_repo: AgentRepoOption = None,
    sandbox: SandboxOption = None,
    allow_unsandboxed: AllowUnsandboxedOption = False,
    network: NetworkOption = None,
    allow_network: AllowNetworkOption = False,
    fail_under: FailUnderOption = None,
    fail_under_on: FailUnderOnOption = GateOn.accuracy,
    fail_under_excludes_errors: FailUnderExcludesErrorsOption = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
    format: Annotated[
        str,
        typer.Option(
            "--format", help="table or json (one document on stdout, as `run --format json`)."
        ),
    ] = "table",
    db: DbOption = None,
) -> None:
    """Re-run part of a run into a new run linked to it (`report --merged` shows the combined
    result; --fail-under gates on that merged result)."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.report.render import plural
    from benchyard.runner.api import execute, plan_rerun

    check_list_format(format)
    if failed == recover:
        raise typer.BadParameter(
            "say what to re-run: --failed or --recover", param_hint="--failed/--recover"
        )
    config = load_project()
    _announce_to_webhooks(config)
    store = open_store(db, config)
    parent = store.resolve_run(run_ref)
    overrides: dict[str, object] = {"concurrency": concurrency} if concurrency else {}
    if sandbox:
        overrides["sandbox"] = sandbox  # else the parent run's sandbox
    if allow_unsandboxed:
        overrides["allow_unsandboxed"] = True
    mode = network_mode(network, allow_network)
    if mode:  # else the parent run's network
        overrides.update(network=mode, allow_network=mode == "all")
    agent_overrides = {"max_tokens": max_tokens} if max_tokens else {}
    plan = plan_rerun(store, parent, overrides, recover=recover, agent_overrides=agent_overrides)
    typer.echo(f"re-running {plural(len(plan.plan), 'attempt')} of run {parent.id[:8]}", err=True)
    _execute_and_report(
        store,
        lambda observer: execute(
            store,
            plan.benchmark,
            plan.agent,
            plan.plan,
            plan.settings,
            agent_repo=agent_repo,
            parent_run_id=parent.id,
            observer=observer,
        ),
        len(plan.plan),
        quiet,
        plan.settings,
        Threshold(fail_under, fail_under_on, fail_under_excludes_errors),
        merged=True,
        format=format,
    )
