"""Registry of executors, chosen per worker with `--executor`. Built-ins are `module:factory`
strings imported only when chosen (Ray costs nothing until used); other packages add theirs
through the `benchyard.executors` entry-point group (each a factory `(ExecutorOptions) ->
Executor`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import cast

from benchyard.executors.base import Executor, ExecutorOptions, ExecutorUnavailable

ENTRY_POINT_GROUP = "benchyard.executors"
DEFAULT_EXECUTOR = "local"

ExecutorFactory = Callable[[ExecutorOptions], Executor]

BUILTIN_EXECUTORS: dict[str, str] = {
    "local": "benchyard.executors.local:open_local",
    "ray": "benchyard.executors.ray.driver:open_ray",
}


def executor_names() -> list[str]:
    return sorted(
        {*BUILTIN_EXECUTORS, *(entry.name for entry in entry_points(group=ENTRY_POINT_GROUP))}
    )


def _factory(name: str) -> ExecutorFactory | None:
    target = BUILTIN_EXECUTORS.get(name)
    if target is not None:
        module, attribute = target.split(":")
        return cast(ExecutorFactory, getattr(importlib.import_module(module), attribute))
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == name:
            return cast(ExecutorFactory, entry.load())
    return None


def build_executor(
    name: str = DEFAULT_EXECUTOR, options: ExecutorOptions | None = None
) -> Executor:
    """The executor called `name`, ready (a cluster executor connected); ExecutorUnavailable when
    it is unknown or cannot work here."""
    factory = _factory(name)
    if factory is None:
        raise ExecutorUnavailable(
            f"unknown executor '{name}' (known: {', '.join(executor_names())})"
        )
    return factory(options or ExecutorOptions())
