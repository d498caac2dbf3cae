"""`export` and `import-run`: runs in the formats other tools read, and Inspect AI logs read into
the store (benchyard.interop)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import DbOption, ListFormatOption, RunArg, check_list_format

EXPORT_FORMATS = ("inspect", "atif", "jsonl")


@handle_errors
def export(
    run_ref: RunArg,
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="inspect (an Inspect AI log: `inspect view`), atif (Harbor trajectories, one "
            "file per attempt) or jsonl (one line per try, for notebooks).",
        ),
    ] = "jsonl",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="inspect: a file or a log directory; atif: a directory; jsonl: a file "
            "(default: standard output).",
        ),
    ] = None,
    trajectories: Annotated[
        bool, typer.Option("--trajectories", help="jsonl: each try's trajectory too.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Write a run so that the tools people already use open it."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.interop import atif, inspect_log, jsonl
    from benchyard.interop.source import RunSource

    if format not in EXPORT_FORMATS:
        raise typer.BadParameter(
            f"'{format}' is not one of {', '.join(EXPORT_FORMATS)}", param_hint="--format"
        )
    store = open_store(db, load_project())
    run = store.resolve_run(run_ref)
    if format == "jsonl":
        if output is None:
            count = jsonl.write(store, run, sys.stdout, trajectories)
        else:
            count = jsonl.write_file(store, run, output, trajectories)
            typer.echo(f"wrote {count} tries of run {run.id[:8]} to {output}", err=True)
        return
    source = RunSource.read(store, run)
    if format == "inspect":
        target = output or Path("logs")
        if target.is_dir() or target.suffix != ".json":
            target = target / inspect_log.default_name(run)
        inspect_log.write_eval_log(source, target)
        typer.echo(
            f"wrote run {run.id[:8]} as an Inspect log: {target} "
            f"(`inspect view --log-dir {target.parent}`)",
            err=True,
        )
        return
    directory = output or Path(f"{run.id[:8]}-atif")
    written = atif.write_trajectories(source, directory)
    typer.echo(
        f"wrote {len(written)} ATIF trajectories of run {run.id[:8]} to {directory}/", err=True
    )


@handle_errors
def import_run(
    log: Annotated[Path, typer.Argument(help="An Inspect AI log (.json or .eval).")],
    benchmark: Annotated[
        str | None,
        typer.Option(
            "--benchmark",
            help="The benchyard benchmark the log's samples are scenarios of: the run takes its "
            "name, version and content hash, so `compare` pairs it with benchyard's runs.",
        ),
    ] = None,
    agent_name: Annotated[
        str | None,
        typer.Option("--agent-name", help="The agent's name in the store (default: the model)."),
    ] = None,
    scorer: Annotated[
        str | None,
        typer.Option("--scorer", help="The score that gives the verdict (default: the first)."),
    ] = None,
    pass_threshold: Annotated[
        float,
        typer.Option(
            "--pass-threshold", help="A numeric score at or above this passes (C is 1, P 0.5)."
        ),
    ] = 1.0,
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """Read an Inspect log's samples and scores into the store as a finished run."""
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.cli.context import load_project, open_store
    from benchyard.interop.inspect_log import import_log

    check_list_format(format)
    loaded = load_benchmark(benchmark) if benchmark else None
    store = open_store(db, load_project())
    imported = import_log(
        store,
        log,
        benchmark=loaded,
        agent_name=agent_name,
        scorer=scorer,
        pass_threshold=pass_threshold,
    )
    if imported.unknown:
        shown = ", ".join(imported.unknown[:5]) + (" ..." if len(imported.unknown) > 5 else "")
        typer.echo(
            f"warning: {len(imported.unknown)} sample ids are not scenarios of "
            f"{loaded.name if loaded else 'the benchmark'}: {shown}",
            err=True,
        )
    typer.echo(
        f"imported {imported.attempts} samples of {log.name} as run {imported.run.id} "
        f"({imported.run.benchmark_name} {imported.run.benchmark_version}, agent "
        f"{imported.run.agent_name})",
        err=True,
    )
    latest = store.resolve_run("latest")
    if latest.id != imported.run.id:
        typer.echo(
            f"note: the run keeps the log's start time "
            f"({imported.run.started_at:%Y-%m-%d %H:%M:%S}), so `latest` still names run "
            f"{latest.id[:8]}, which started after it: name this one by its id",
            err=True,
        )
    if format == "json":
        from benchyard.report.listing import dump_json
        from benchyard.report.outputs import import_run_output

        sys.stdout.write(dump_json(import_run_output(log, imported)))
    else:
        typer.echo(imported.run.id)
