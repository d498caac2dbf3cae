"""`benchyard view-bundle`: a static, read-only copy of the web UI's pages for some runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import DbOption


@handle_errors
def view_bundle(
    runs: Annotated[
        list[str], typer.Argument(help="Runs to copy: ids, unique prefixes, latest, latest~N.")
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="A new (or empty) directory to write it in.")
    ],
    benchmarks: Annotated[
        list[Path] | None,
        typer.Option(
            "--benchmarks",
            help="Directories to look for benchmarks in, for the scenarios shown (default: the "
            "current one); repeatable.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Write a static, read-only copy of the web pages of RUNS that opens from any file server."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.web.bundle import write_bundle

    store = open_store(db, load_project())
    try:
        bundle = write_bundle(store, runs, output, tuple(benchmarks or [Path.cwd()]))
    finally:
        store.close()
    typer.echo(
        f"wrote {bundle.pages} pages ({bundle.files} files) of {len(bundle.run_ids)} run(s) to "
        f"{output}\n  serve it from its own root, for instance: "
        f"python -m http.server -d {output} 8000, then open http://127.0.0.1:8000/"
    )
