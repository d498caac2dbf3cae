"""`--executor` and `--ray-address`, shared by `run` and `worker`: where attempts run."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from benchyard.executors.base import Executor

ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor",
        help="Where attempts run: local (this process) or ray (tasks on a Ray cluster, placed "
        "by the resources each scenario asks for; docs/distributed.md).",
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="The Ray cluster to join, as its head's host:port (default: RAY_ADDRESS, else the "
        "cluster this machine is a node of, else a Ray instance started by this process).",
    ),
]
ConcurrencyOption = Annotated[
    int | None,
    typer.Option(
        "--concurrency",
        "-j",
        min=1,
        help="Attempts at once (default 8; with --executor ray, the CPUs of the cluster).",
    ),
]


def open_executor(
    name: str, ray_address: str | None, log: Callable[[str], None] | None = None
) -> Executor:
    """The executor chosen on the command line, ready (a Ray executor has joined its cluster)."""
    from benchyard.executors import ExecutorOptions, build_executor

    if ray_address and name != "ray":
        raise typer.BadParameter("it goes with --executor ray", param_hint="--ray-address")
    return build_executor(name, ExecutorOptions(address=ray_address, log=log))
