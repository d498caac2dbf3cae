"""Commands that judge recorded runs: compare, history, rescore."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import DbOption, ListFormatOption, RunArg, check_list_format

FormatOption = Annotated[str, typer.Option("--format", help="table, json or md.")]
FORMATS = ("table", "json", "md")


def _check_format(format: str, allowed: tuple[str, ...] = FORMATS) -> None:
    if format not in allowed:
        raise typer.BadParameter(
            f"'{format}' is not one of {', '.join(allowed)}", param_hint="--format"
        )


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    output.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {output}", err=True)


def _json(payload: Any) -> str:
    return json.dumps(payload, indent=2) + "\n"


@handle_errors
def compare(
    run_refs: Annotated[
        list[str],
        typer.Argument(help="The baseline run, then one or more runs to compare with it."),
    ],
    format: FormatOption = "table",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file.")
    ] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help="Exit 1 when a run regressed: its accuracy dropped significantly (exact McNemar "
            "test), its errors rose significantly, or its accuracy drops significantly once its "
            "new errors count as failures.",
        ),
    ] = False,
    alpha: Annotated[
        float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")
    ] = 0.05,
    allow_version_mismatch: Annotated[
        bool,
        typer.Option(
            "--allow-version-mismatch", help="Compare runs of different benchmark versions."
        ),
    ] = False,
    flips_only: Annotated[
        bool, typer.Option("--flips-only", help="List only the scenarios whose verdict flipped.")
    ] = False,
    merged: Annotated[
        bool,
        typer.Option(
            "--merged/--no-merge",
            help="Merge each rerun with the runs it re-ran (the default; the output says so).",
        ),
    ] = True,
    allow_partial: Annotated[
        bool,
        typer.Option(
            "--allow-partial",
            help="Compare a run that covers part of what the baseline covers (a rerun read "
            "alone, other filters or limit, an unfinished run) instead of refusing it.",
        ),
    ] = False,
    list_all: Annotated[
        bool,
        typer.Option(
            "--all",
            help="List the unchanged scenarios too (the same verdict in every run); by default "
            "the table and Markdown count them, not list them (JSON always lists them).",
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Compare runs scenario by scenario: flips first, accuracy delta with its interval, McNemar,
    and the change in errors with its own exact test (errors are left out of accuracy). The
    scenarios with the same verdict in every run are counted, and listed with --all (JSON lists
    them always)."""
    from benchyard.cli.context import load_project, open_store, reading
    from benchyard.cli.render import print_renderables
    from benchyard.report.compare import compare_read, compare_runs, streamable
    from benchyard.report.compare_render import (
        comparison_markdown,
        comparison_rich,
        verdict_line,
    )
    from benchyard.store.run_reads import resolve_run

    _check_format(format)
    if len(run_refs) < 2:
        raise typer.BadParameter("give a baseline run and at least one run to compare with it")
    options: dict[str, Any] = {
        "alpha": alpha,
        "allow_version_mismatch": allow_version_mismatch,
        "allow_partial": allow_partial,
        "list_unchanged": list_all or format == "json",  # JSON keeps every row, as before
    }
    # Through a Reader (sqlite3 for a SQLite store at the head revision: no SQLAlchemy) when the
    # runs merge as they are read; else through the Store.
    comparison = None
    with reading(db) as reader:
        resolved = [resolve_run(reader, ref) for ref in run_refs]
        speed = any(run.kind == "speed" for run in resolved)
        if not speed and streamable(resolved, merged):
            comparison = compare_read(reader, resolved, **options)
    if comparison is None:
        store = open_store(db, load_project())
        if speed:
            from benchyard.cli.model_commands import compare_speed

            compare_speed(store, resolved, format, output, allow_version_mismatch)
            return
        comparison = compare_runs(store, resolved, merged=merged, **options)
    if format == "table":
        print_renderables(comparison_rich(comparison, flips_only), output)
    elif format == "json":
        _emit(_json(comparison.model_dump(mode="json")), output)
    else:
        _emit(comparison_markdown(comparison, flips_only), output)
    regressions = [c for c in comparison.candidates if c.regression]
    if fail_on_regression and regressions:
        for candidate in regressions:
            typer.echo(f"regression: {verdict_line(candidate, alpha)}", err=True)
        raise typer.Exit(1)


@handle_errors
def history(
    benchmark: Annotated[str, typer.Argument(help="A benchmark name (or its directory).")],
    agent: Annotated[str | None, typer.Option("--agent", help="Only runs of this agent.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="The newest N runs.")] = 20,
    format: FormatOption = "table",
    db: DbOption = None,
) -> None:
    """A benchmark's score over runs, oldest first: commit, date, accuracy and interval, cost."""
    from benchyard.cli.context import reading
    from benchyard.cli.render import print_renderables
    from benchyard.report.compare_render import history_markdown, history_rows, rich_table
    from benchyard.report.history import benchmark_history

    _check_format(format)
    name = _benchmark_name(benchmark)
    with reading(db) as reader:  # sqlite3 for a SQLite store at the head revision
        points = benchmark_history(reader, name, agent, limit)
    if format == "json":
        from benchyard.report.listing import dump_json
        from benchyard.report.outputs import history_entries

        _emit(dump_json(history_entries(points)), None)
    elif format == "md":
        _emit(history_markdown(points), None)
    elif points:
        print_renderables(
            [rich_table(f"history of {points[0].benchmark.name}", *history_rows(points))]
        )
    else:
        typer.echo(f"no runs of '{benchmark}'{f' by {agent}' if agent else ''} in the store")


def _benchmark_name(reference: str) -> str:
    """A directory holding benchmark.yaml names its benchmark; anything else is a name."""
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.spec.loader import MANIFEST

    path = Path(reference)
    if (path / MANIFEST).is_file() or path.name == MANIFEST:
        return load_benchmark(path).name
    return reference


@handle_errors
def rescore(
    run_ref: RunArg,
    benchmark: Annotated[
        Path | None,
        typer.Option(
            "--benchmark", help="Grade with this benchmark (default: the run's, as it is now)."
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No report.")] = False,
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """Grade a run's recorded outputs again, without running the agent, into a new linked run."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.cli.render import print_report
    from benchyard.report.build import build_report
    from benchyard.report.render import plural
    from benchyard.runner.rescore import rescore_run

    check_list_format(format)
    store = open_store(db, load_project())
    original = store.resolve_run(run_ref)
    outcome = rescore_run(store, original, str(benchmark) if benchmark else None)
    if format == "json":
        from benchyard.report.listing import dump_json
        from benchyard.report.outputs import rescore_output

        report = build_report(store, outcome.run)
        sys.stdout.write(dump_json(rescore_output(original, outcome, report)))
    elif not quiet:
        print_report(build_report(store, outcome.run))
    flipped = [
        *(f"{sid} (epoch {epoch}) now passes" for sid, epoch in outcome.to_pass),
        *(f"{sid} (epoch {epoch}) no longer passes" for sid, epoch in outcome.to_fail),
    ]
    for line in flipped:
        typer.echo(line, err=True)
    typer.echo(
        f"rescored run {original.id[:8]}: {plural(outcome.regraded, 'attempt')} graded again, "
        f"{outcome.copied} kept as they were, {len(flipped)} flipped",
        err=True,
    )
    typer.echo(f"run {outcome.run.id}  ({outcome.run.status})", err=format == "json")
