"""Turning expected failures (bad input, unknown run, bad agent config) into one clear message.

Every command is wrapped by `handle_errors`, which also looks at its `Path` parameters before it
runs: one named like an output (OUTPUT_PARAMETERS) must be creatable, any other must exist; and an
OSError escaping a command (a file it could not write after all) is one line too, never a
traceback. Each exits 2 (docs/exit-codes.md)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import typer

from benchyard.errors import BenchyardError

P = ParamSpec("P")
R = TypeVar("R")

OUTPUT_PARAMETERS = frozenset({"output", "out", "forecast_out", "directory", "work_root"})
"""Parameters naming what a command writes: a file, or a directory it creates."""
DIRECTORY_OUTPUTS = frozenset({"directory", "work_root"})


class UnusablePath(BenchyardError):
    """A command's input that does not exist, or an output it cannot create."""


def handle_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Print a BenchyardError as one line (a benchmark's problems one per line) and exit non-zero."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            check_paths(kwargs)
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
        except OSError as error:
            typer.echo(f"error: {_os_error(error)}", err=True)
            raise typer.Exit(2) from None
        except Exception as error:
            if not _store_fault(error):
                raise
            reason = " ".join(str(getattr(error, "orig", None) or error).split())
            typer.echo(f"error: the store failed: {reason}", err=True)
            raise typer.Exit(2) from None

    return wrapper


def _store_fault(error: Exception) -> bool:
    """A database that went away or broke mid-command (an OperationalError of SQLAlchemy or of
    sqlite3, which reads SQLite stores for `runs`: server gone, disk full, file unreadable), told
    without importing either into every command."""
    return any(
        kind.__name__ == "OperationalError" and kind.__module__ in ("sqlalchemy.exc", "sqlite3")
        for kind in type(error).__mro__
    )


def check_paths(parameters: dict[str, Any]) -> None:
    """Refuse a missing input or an output that cannot be created, before the command starts."""
    for name, value in parameters.items():
        for path in _paths(value):
            problem = (
                _output_problem(path, directory=name in DIRECTORY_OUTPUTS)
                if name in OUTPUT_PARAMETERS
                else _input_problem(path)
            )
            if problem is not None:
                raise UnusablePath(problem)


def _paths(value: object) -> Iterable[Path]:
    if isinstance(value, Path):
        return [value]
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, Path)]
    return []


def _input_problem(path: Path) -> str | None:
    return None if path.exists() else f"{path}: no such file or directory"


def _output_problem(path: Path, *, directory: bool) -> str | None:
    """Why `path` cannot be written (or, for a directory, created); None when it can."""
    if path.exists():
        if directory and not path.is_dir():
            return f"cannot create the directory {path}: a file is there"
        return None
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"cannot write {path}: {ancestor} is not a directory"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"cannot write {path}: {ancestor} is not writable"
    return None


def _os_error(error: OSError) -> str:
    """An OSError as one line naming the file: `cannot write X: Not a directory`."""
    reason = error.strerror or str(error)
    if error.filename is None:
        return reason
    return f"{error.filename}: {reason}" + (f" ({error.filename2})" if error.filename2 else "")
