"""Commands that read runs: runs, show, report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import DbOption, RunArg

if TYPE_CHECKING:
    pass


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
