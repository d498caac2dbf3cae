"""Registry of check types. Built-ins register on import; other packages add theirs via the
`benchyard.checks` entry-point group (each entry point names a module that uses `@check`)."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
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
    "benchyard.checks.tools",
    "benchyard.checks.judge",
    "benchyard.checks.code_exec",
    "benchyard.checks.tests_check",
    "benchyard.checks.static",
    "benchyard.checks.diff_quality",
    "benchyard.checks.formats",  # official evaluators of imported formats (importers/)
    "benchyard.checks.json_embedded",
    "benchyard.checks.tool_calls",
    "benchyard.checks.python_grader",
    "benchyard.checks.similarity",
    "benchyard.checks.model_calls",
    "benchyard.checks.refusal",
    "benchyard.sre.check",  # root_cause (SRE incidents; docs/sre.md)
)

P = TypeVar("P", bound=CheckParams)
Outcome = CheckResult | Awaitable[CheckResult]
CheckFunction = Callable[[Any, Evidence], Outcome]


@dataclass(frozen=True)
class CheckType:
    name: str
    params: type[CheckParams]
    evaluate: CheckFunction
    summary: str
    needs_code: bool = False  # graded in a fresh verification sandbox (Evidence.code)


_registry: dict[str, CheckType] = {}
_loaded = False


def check(
    name: str, params: type[P], *, needs_code: bool = False
) -> Callable[[Callable[[P, Evidence], Outcome]], Callable[[P, Evidence], Outcome]]:
    """Register a check type: `@check("regex", RegexParams)` over `def regex(params, evidence)`.

    A check may be `async`; one that runs code says `needs_code=True` and gets `evidence.code`.
    """

    def register(
        function: Callable[[P, Evidence], Outcome],
    ) -> Callable[[P, Evidence], Outcome]:
        summary = (function.__doc__ or "").strip().splitlines()[0] if function.__doc__ else ""
        _registry[name] = CheckType(name, params, function, summary, needs_code)
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
