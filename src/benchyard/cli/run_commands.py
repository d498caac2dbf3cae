"""Commands that execute runs: run, rerun."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import (
    AllowNetworkOption,
    AllowUnsandboxedOption,
    DbOption,
    OnCrash,
    RunArg,
    SandboxOption,
)

if TYPE_CHECKING:
    from benchyard.runner.execute import RunObserver
    from benchyard.store.records import RunRecord
    from benchyard.store.store import Store


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
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-j", min=1, help="Attempts at once.")
    ] = 8,
    epochs: Annotated[int, typer.Option("--epochs", min=1, help="Attempts per scenario.")] = 1,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Run only the first N scenarios.")
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
    agent_repo: Annotated[
        Path, typer.Option("--agent-repo", help="The agent's git repository, for the commit tag.")
    ] = Path("."),
    keep_workdirs: Annotated[
        bool, typer.Option("--keep-workdirs", help="Keep each attempt's workdir after the run.")
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
    allow_network: AllowNetworkOption = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar and no report.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Run a benchmark against an agent; every attempt lands in the store."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.runner.api import execute, judge_for, plan_run, resolve_agent
    from benchyard.runner.execute import RunSettings, default_work_root
    from benchyard.sandbox.registry import default_sandbox_name
    from benchyard.spec.loader import load_benchmark

    config = load_project()
    chosen = resolve_agent(config, agent, agent_cmd)
    loaded = load_benchmark(benchmark)
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
        allow_network=allow_network,
    )
    plan = plan_run(loaded, settings)
    store = open_store(db, config)
    if enqueue:
        from benchyard.cli.queue_commands import tell_queued
        from benchyard.runner.api import enqueue as enqueue_run

        tell_queued(enqueue_run(store, loaded, chosen, plan, settings, agent_repo=agent_repo))
        return
    _execute_and_report(
        store,
        lambda observer: execute(
            store, loaded, chosen, plan, settings, agent_repo=agent_repo, observer=observer
        ),
        len(plan),
        quiet,
    )


def _execute_and_report(
    store: Store, start: Callable[[RunObserver], RunRecord], total: int, quiet: bool
) -> None:
    from benchyard.cli.progress import ProgressObserver
    from benchyard.cli.render import print_report
    from benchyard.report.build import build_report

    observer = ProgressObserver(total, enabled=not quiet)
    try:
        with observer:
            finished = start(observer)
    except KeyboardInterrupt:
        run_id = observer.run_id or "?"
        typer.echo(
            f"interrupted: run {run_id[:8]} kept {observer.finished} finished attempts "
            f"(see `benchyard show {run_id[:8]}`)",
            err=True,
        )
        raise typer.Exit(130) from None
    if not quiet:
        print_report(build_report(store, finished))
    typer.echo(f"run {finished.id}  ({finished.status})")


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
    agent_repo: Annotated[Path, typer.Option("--agent-repo")] = Path("."),
    sandbox: SandboxOption = None,
    allow_unsandboxed: AllowUnsandboxedOption = False,
    allow_network: AllowNetworkOption = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
    db: DbOption = None,
) -> None:
    """Re-run part of a run into a new run linked to it (`report --merged` shows the combined result)."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.runner.api import execute, plan_rerun

    if failed == recover:
        raise typer.BadParameter(
            "say what to re-run: --failed or --recover", param_hint="--failed/--recover"
        )
    config = load_project()
    store = open_store(db, config)
    parent = store.resolve_run(run_ref)
    overrides: dict[str, object] = {"concurrency": concurrency} if concurrency else {}
    if sandbox:
        overrides["sandbox"] = sandbox  # else the parent run's sandbox
    if allow_unsandboxed:
        overrides["allow_unsandboxed"] = True
    if allow_network:
        overrides["allow_network"] = True
    agent_overrides = {"max_tokens": max_tokens} if max_tokens else {}
    plan = plan_rerun(store, parent, overrides, recover=recover, agent_overrides=agent_overrides)
    typer.echo(f"re-running {len(plan.plan)} attempts of run {parent.id[:8]}", err=True)
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
    )
