"""The options of `benchyard` itself, before any command."""

from __future__ import annotations

from typing import Annotated

import typer


def _version(value: bool) -> None:
    if value:
        from benchyard import __version__

        typer.echo(f"benchyard {__version__}")
        raise typer.Exit()


def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """benchyard: every scenario in parallel, every trajectory recorded, every run tagged with a commit."""
