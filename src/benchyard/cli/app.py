"""The `benchyard` command line. Commands parse options, call the library and render; heavy modules
are imported inside the commands so that `benchyard --help` stays fast."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchyard.cli.errors import handle_errors

if TYPE_CHECKING:
    from benchyard.runner.execute import RunObserver
    from benchyard.store.records import RunRecord
    from benchyard.store.store import Store

app = typer.Typer(
    name="benchyard",
    help="Run benchmarks against AI agents and LLM endpoints; compare runs; re-run what failed.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="SQLAlchemy URL of the store (default: BENCHYARD_DB, benchyard.yaml, "
        "then sqlite under ./.benchyard/).",
    ),
]
RunArg = Annotated[
    str, typer.Argument(help="A run id, a unique id prefix, 'latest' or 'latest~N'.")
]


def _version(value: bool) -> None:
    if value:
        from benchyard import __version__

        typer.echo(f"benchyard {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """benchyard: every scenario in parallel, every trajectory recorded, every run tagged with a commit."""


@app.command()
@handle_errors
def init(
    directory: Annotated[Path, typer.Argument(help="Where to write benchyard.yaml.")] = Path("."),
) -> None:
    """Write a starter benchyard.yaml (agents, store) and a minimal example agent."""
    from benchyard.config import CONFIG_FILE, STARTER_AGENT, STARTER_CONFIG

    directory.mkdir(parents=True, exist_ok=True)
    for name, content in ((CONFIG_FILE, STARTER_CONFIG), ("agent.py", STARTER_AGENT)):
        target = directory / name
        if target.exists():
            typer.echo(f"kept existing {target}")
        else:
            target.write_text(content, encoding="utf-8")
            typer.echo(f"wrote {target}")
    typer.echo("next: benchyard run starter --agent example   (or --agent oracle)")


@app.command()
@handle_errors
def validate(
    path: Annotated[str, typer.Argument(help="A benchmark directory or built-in name.")],
) -> None:
    """Check a benchmark's files and list every problem with file, line and field."""
    from benchyard.spec.loader import load_benchmark

    benchmark = load_benchmark(path)
    categories = sorted({s.category for s in benchmark.scenarios})
    typer.echo(
        f"ok: {benchmark.name} {benchmark.version}: {len(benchmark.scenarios)} scenarios in "
        f"{len(categories)} categories ({', '.join(categories)}); {benchmark.content_hash}"
    )


@app.command()
@handle_errors
def benchmarks() -> None:
    """List the built-in benchmark library and the benchmarks under the current directory."""
    from benchyard.spec.library import builtin_benchmarks, local_benchmarks
    from benchyard.spec.loader import load_benchmark
    from benchyard.spec.problems import BenchmarkInvalid

    entries = [(name, path, "built-in") for name, path in builtin_benchmarks().items()]
    entries += [
        (str(path.relative_to(Path.cwd().resolve())) or ".", path, "local")
        for path in local_benchmarks(Path.cwd())
    ]
    for label, path, origin in entries:
        try:
            benchmark = load_benchmark(path)
            detail = f"{benchmark.version}  {len(benchmark.scenarios)} scenarios  {benchmark.manifest.description}"
        except BenchmarkInvalid as invalid:
            detail = f"invalid ({len(invalid.problems)} problems; run `benchyard validate {label}`)"
        typer.echo(f"{label:<28} {origin:<9} {detail}")


@app.command()
@handle_errors
def verify(
    benchmark: Annotated[str, typer.Argument(help="A benchmark directory or built-in name.")],
) -> None:
    """Run every scenario's reference through its checks; report broken cases (exit 1 if any)."""
    from benchyard.runner.api import verify_benchmark
    from benchyard.spec.loader import load_benchmark

    loaded = load_benchmark(benchmark)
    outcomes = verify_benchmark(loaded)
    broken = [outcome for outcome in outcomes if not outcome.ok]
    for outcome in broken:
        typer.echo(f"broken: {outcome.scenario_id}: {outcome.reason}")
    typer.echo(
        f"{loaded.name} {loaded.version}: {len(outcomes)} scenarios verified, {len(broken)} broken"
    )
    if broken:
        raise typer.Exit(1)


@app.command()
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
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar and no report.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Run a benchmark against an agent; every attempt lands in the store."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.runner.api import execute, plan_run, resolve_agent
    from benchyard.runner.execute import RunSettings, default_work_root
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
    )
    plan = plan_run(loaded, settings)
    store = open_store(db, config)
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


@app.command()
@handle_errors
def rerun(
    run_ref: RunArg,
    failed: Annotated[
        bool, typer.Option("--failed", help="Re-run the failed, errored and timed-out attempts.")
    ] = False,
    concurrency: Annotated[int | None, typer.Option("--concurrency", "-j", min=1)] = None,
    agent_repo: Annotated[Path, typer.Option("--agent-repo")] = Path("."),
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
    db: DbOption = None,
) -> None:
    """Re-run part of a run into a new run linked to it (`report --merged` shows the combined result)."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.runner.api import execute, plan_rerun

    if not failed:
        raise typer.BadParameter("say what to re-run: --failed", param_hint="--failed")
    config = load_project()
    store = open_store(db, config)
    parent = store.resolve_run(run_ref)
    overrides = {"concurrency": concurrency} if concurrency else {}
    plan = plan_rerun(store, parent, overrides)
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


@app.command()
@handle_errors
def runs(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many runs.")] = 20,
    benchmark: Annotated[
        str | None, typer.Option("--benchmark", help="Only runs of this benchmark.")
    ] = None,
    db: DbOption = None,
) -> None:
    """The run history, newest first, with each run's commit."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.cli.render import print_runs

    store = open_store(db, load_project())
    print_runs(store, store.list_runs(limit, benchmark))


@app.command()
@handle_errors
def show(
    run_ref: RunArg,
    scenario: Annotated[
        str | None, typer.Argument(help="A scenario id: show its attempts in full.")
    ] = None,
    db: DbOption = None,
) -> None:
    """A run's settings and attempts, or one scenario's attempts with checks and trajectory."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.cli.render import print_run, print_scenario_attempts

    store = open_store(db, load_project())
    found = store.resolve_run(run_ref)
    if scenario is None:
        print_run(store, found)
    else:
        print_scenario_attempts(store, found, scenario)


@app.command()
@handle_errors
def report(
    run_refs: Annotated[
        list[str], typer.Argument(help="One or more runs (id, prefix, latest, latest~N).")
    ],
    format: Annotated[str, typer.Option("--format", help="table, json or md.")] = "table",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file.")
    ] = None,
    merged: Annotated[
        bool, typer.Option("--merged", help="Merge each run with the runs it re-ran.")
    ] = False,
    db: DbOption = None,
) -> None:
    """A run's report: accuracy with its interval, per-category counts, failures with causes."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.cli.render import print_report
    from benchyard.report.build import build_report
    from benchyard.report.render import to_markdown

    if format not in ("table", "json", "md"):
        raise typer.BadParameter(f"'{format}' is not one of table, json, md", param_hint="--format")
    store = open_store(db, load_project())
    reports = [build_report(store, store.resolve_run(ref), merged=merged) for ref in run_refs]
    if format == "table":
        for built in reports:
            print_report(built, path=output)
        return
    if format == "json":
        payload = [r.model_dump(mode="json") for r in reports]
        text = json.dumps(payload[0] if len(payload) == 1 else payload, indent=2) + "\n"
    else:
        text = to_markdown(reports)
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)


def main() -> None:
    app()
