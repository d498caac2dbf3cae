"""Tool environments: tools backed by a simulator rather than by canned fixture responses.

A scenario names one under `environment:` (`{type: sre, ...parameters}`); benchyard builds the
environment's tools for each attempt and serves them through the same ToolBox as fixture tools,
so every call is observed, recorded and costed alike. An environment type is an object with a
`params` model (validated when the benchmark loads, each problem at its file, line and field),
the names of its tools, a `check` that may refuse parameters it cannot simulate, and `tools`,
which builds the tools of one attempt. Built-ins are listed as `"module:attribute"` strings and
imported on first use; other packages register theirs under the entry-point group
`benchyard.environments`.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Sequence
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Protocol, cast

from pydantic import BaseModel

if TYPE_CHECKING:
    from benchyard.spec.models import EnvironmentSpec

ENTRY_POINT_GROUP = "benchyard.environments"
BUILTIN = {"sre": "benchyard.sre.environment:ENVIRONMENT"}


class Tool(Protocol):
    """What the ToolBox needs of a tool: a fixture tool (spec.tools.ToolSpec) or a simulated one."""

    @property
    def name(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...

    def definition(self) -> dict[str, Any]:
        """The tool as an OpenAI-compatible `tools` entry."""
        ...

    def respond(self, arguments: dict[str, Any]) -> tuple[str, bool]:
        """The answer to validated arguments, as (text, is_error)."""
        ...


class ToolEnvironment(Protocol):
    name: str
    params: type[BaseModel]
    tool_names: tuple[str, ...]

    def check(self, params: Any) -> str | None:
        """Why these (valid) parameters cannot be simulated, or None."""
        ...

    def tools(self, params: Any) -> Sequence[Tool]:
        """The tools of one attempt (fresh state; deterministic for the same parameters)."""
        ...


_loaded: dict[str, ToolEnvironment] = {}


def environment_names() -> list[str]:
    names = dict.fromkeys(BUILTIN)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        names.setdefault(entry.name)
    return list(names)


def get_environment(name: str) -> ToolEnvironment | None:
    if name in _loaded:
        return _loaded[name]
    target = BUILTIN.get(name) or next(
        (e.value for e in entry_points(group=ENTRY_POINT_GROUP) if e.name == name), None
    )
    if target is None:
        return None
    module, _, attribute = target.partition(":")
    found = cast(ToolEnvironment, getattr(importlib.import_module(module), attribute))
    _loaded[name] = found
    return found


def unknown_environment(name: str) -> str:
    known = environment_names()
    hint = difflib.get_close_matches(name, known, n=1)
    return f"unknown environment type '{name}'" + (
        f" (did you mean '{hint[0]}'?)" if hint else f" (known: {', '.join(known)})"
    )


def environment_tools(spec: EnvironmentSpec) -> list[Tool]:
    """The tools a scenario's environment offers for one attempt."""
    environment = get_environment(spec.type)
    if environment is None:
        raise ValueError(unknown_environment(spec.type))
    return list(environment.tools(environment.params.model_validate(spec.params)))
