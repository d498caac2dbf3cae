"""Turning expected failures (bad input, unknown run, bad agent config) into one clear message."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from benchyard.errors import BenchyardError

P = ParamSpec("P")
R = TypeVar("R")


def handle_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Print a BenchyardError as one line (a benchmark's problems one per line) and exit non-zero."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except BenchyardError as error:
            problems = getattr(error, "problems", None)
            if problems is not None:
                for problem in problems:
                    typer.echo(str(problem), err=True)
                count = len(problems)
                typer.echo(f"{count} problem{'' if count == 1 else 's'} found", err=True)
                raise typer.Exit(1) from None
            typer.echo(f"error: {error}", err=True)
            raise typer.Exit(2) from None
        except Exception as error:
            if not _store_fault(error):
                raise
            reason = " ".join(str(getattr(error, "orig", None) or error).split())
            typer.echo(f"error: the store failed: {reason}", err=True)
            raise typer.Exit(2) from None

    return wrapper


def _store_fault(error: Exception) -> bool:
    """A database that went away or broke mid-command (SQLAlchemy's OperationalError: server
    gone, disk full, file unreadable), told without importing SQLAlchemy into every command."""
    return any(
        kind.__name__ == "OperationalError" and kind.__module__ == "sqlalchemy.exc"
        for kind in type(error).__mro__
    )
