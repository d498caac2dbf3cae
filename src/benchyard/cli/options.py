"""Options shared by several commands."""

from __future__ import annotations

from enum import StrEnum
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
SandboxOption = Annotated[
    str | None,
    typer.Option(
        "--sandbox",
        help="Where agent commands and model-written code run: bwrap (the default on Linux "
        "with bubblewrap installed), docker, or none (the host; needs --allow-unsandboxed).",
    ),
]
AllowNetworkOption = Annotated[
    bool,
    typer.Option(
        "--allow-network",
        help="Let agent commands reach the network from their sandbox (an agent that calls a "
        "model over HTTP); code is still graded without it.",
    ),
]
AllowUnsandboxedOption = Annotated[
    bool,
    typer.Option(
        "--allow-unsandboxed",
        help="Let --sandbox none run agent commands and model-written code on this host.",
    ),
]


ListFormatOption = Annotated[str, typer.Option("--format", help="table or json.")]
LIST_FORMATS = ("table", "json")


def check_list_format(format: str) -> None:
    if format not in LIST_FORMATS:
        raise typer.BadParameter(
            f"'{format}' is not one of {', '.join(LIST_FORMATS)}", param_hint="--format"
        )


class OnCrash(StrEnum):
    resume = "resume"
    fail = "fail"
