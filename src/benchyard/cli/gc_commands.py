"""`benchyard gc`: drop the stdout, stderr, trajectories and patches of old runs."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import DbOption, ListFormatOption, check_list_format


@handle_errors
def gc(
    older_than: Annotated[
        float | None,
        typer.Option(
            "--older-than", min=0, help="Collect runs started more than this many days ago."
        ),
    ] = None,
    keep_last: Annotated[
        int | None,
        typer.Option("--keep-last", min=0, help="Collect runs other than the newest N."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be dropped; drop nothing.")
    ] = False,
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """Drop the stdout, stderr, trajectories and patches of old runs (--older-than DAYS,
    --keep-last N, or both: runs that are both); verdicts, scores, checks and answers stay. A
    SQLite store is compacted (VACUUM) after. Exits 0, or 2 without --older-than or --keep-last."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.report.render import plural
    from benchyard.store.gc import GcPolicy, collect

    check_list_format(format)
    if older_than is None and keep_last is None:
        raise typer.BadParameter(
            "say which runs: --older-than DAYS, --keep-last N, or both", param_hint="--older-than"
        )
    store = open_store(db, load_project())
    outcome = collect(store, GcPolicy(older_than, keep_last), dry_run=dry_run)
    if format == "json":
        from benchyard.report.listing import dump_json
        from benchyard.report.outputs import gc_output

        sys.stdout.write(dump_json(gc_output(outcome, dry_run)))
        return
    verb = "would drop" if dry_run else "dropped"
    typer.echo(
        f"{verb} the outputs, trajectories and patches of "
        f"{plural(outcome.attempts, 'try', 'tries')} in {plural(len(outcome.runs), 'run')} "
        f"({outcome.stored_bytes:,} bytes stored); verdicts, scores, checks and answers kept"
        + ("; store compacted" if outcome.vacuumed else "")
    )
    if dry_run and outcome.runs:
        typer.echo("runs: " + " ".join(outcome.runs))
