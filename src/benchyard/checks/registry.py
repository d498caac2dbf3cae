"""Registry of check types. Built-ins register on import; other packages add theirs via the
`benchyard.checks` entry-point group (each entry point names a module that uses `@check`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, TypeVar

from benchyard.checks.base import CheckParams, CheckResult, Evidence

ENTRY_POINT_GROUP = "benchyard.checks"
BUILTIN_MODULES = (
    "benchyard.checks.text",
    "benchyard.checks.numeric",
    "benchyard.checks.json_checks",
    "benchyard.checks.shape",
)

P = TypeVar("P", bound=CheckParams)
CheckFunction = Callable[[Any, Evidence], CheckResult]


@dataclass(frozen=True)
class CheckType:
    name: str
    params: type[CheckParams]
    evaluate: CheckFunction
    summary: str


_registry: dict[str, CheckType] = {}
_loaded = False


def check(
    name: str, params: type[P]
) -> Callable[[Callable[[P, Evidence], CheckResult]], Callable[[P, Evidence], CheckResult]]:
    """Register a check type: `@check("regex", RegexParams)` over `def regex(params, evidence)`."""

    def register(
        function: Callable[[P, Evidence], CheckResult],
    ) -> Callable[[P, Evidence], CheckResult]:
        summary = (function.__doc__ or "").strip().splitlines()[0] if function.__doc__ else ""
        _registry[name] = CheckType(name=name, params=params, evaluate=function, summary=summary)
        return function

    return register


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in BUILTIN_MODULES:
        importlib.import_module(module)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        entry.load()


def check_types() -> dict[str, CheckType]:
    _load_all()
    return dict(_registry)


def get_check_type(name: str) -> CheckType | None:
    _load_all()
    return _registry.get(name)
