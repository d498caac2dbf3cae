"""Options shared by several commands."""

from __future__ import annotations

from typing import Annotated

import typer

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
