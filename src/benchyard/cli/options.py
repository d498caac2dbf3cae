"""Options shared by several commands."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from benchyard.sandbox.network import NetworkSpecError, canonical_network

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


NetworkOption = Annotated[
    str | None,
    typer.Option(
        "--network",
        help="What agent commands reach from their sandbox: none; bridge (the default: only "
        "their model bridge, docs/agent-protocol.md#the-model-bridge); HOST:PORT,... (the bridge "
        "and exactly those destinations, through a proxy named by HTTPS_PROXY: "
        "docs/sandboxes.md#network); all (this host's whole network, loopback included; the "
        "store on this host is refused). Code is always graded without a network.",
    ),
]
AllowNetworkOption = Annotated[
    bool,
    typer.Option(
        "--allow-network",
        help="The same as --network all (kept for older scripts).",
    ),
]
ALL_NETWORK_WARNING = (
    "warning: --network all: agent commands share this host's network: every service "
    "listening on it (loopback included: databases, caches, other users' servers), the local "
    "network, cloud metadata (169.254.169.254) and the internet become reachable to them; only "
    "a store on this host is refused. --network bridge gives them their model without this, "
    "and --network HOST:PORT,... their model and those destinations only."
)


def network_mode(network: str | None, allow_network: bool) -> str | None:
    """The mode that --network and --allow-network (its alias of `all`) ask for together, its
    destinations written one way; None when neither is given. Warns on stderr, naming what
    becomes reachable, under `all`."""
    if allow_network and network not in (None, "all"):
        raise typer.BadParameter(
            f"--allow-network means --network all, not --network {network}: give one of them",
            param_hint="--allow-network",
        )
    try:
        mode = "all" if allow_network else (canonical_network(network) if network else None)
    except NetworkSpecError as error:
        raise typer.BadParameter(str(error), param_hint="--network") from None
    if mode == "all":
        typer.echo(ALL_NETWORK_WARNING, err=True)
    return mode


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
