"""Registry of check types. Built-ins are listed by name with the module that defines them and
imported on first use (a benchmark pays only for the checks it uses); other packages add theirs
via the `benchyard.checks` entry-point group (each entry point names a module that uses `@check`),
loaded when a name is not a built-in. A built-in name always means the built-in check."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, TypeVar

from benchyard.checks.base import CheckParams, CheckResult, Evidence

ENTRY_POINT_GROUP = "benchyard.checks"
_FORMATS = "benchyard.formats"  # official evaluators of published benchmarks, one folder each
BUILTIN_CHECKS: dict[str, str] = {
    "equals": "benchyard.checks.text",
    "contains": "benchyard.checks.text",
    "regex": "benchyard.checks.text",
    "facts": "benchyard.checks.text",
    "numeric": "benchyard.checks.numeric",
    "json_valid": "benchyard.checks.json_checks",
    "json_schema": "benchyard.checks.json_checks",
    "output_match": "benchyard.checks.json_checks",
    "response_shape": "benchyard.checks.shape",
    "tool_chain": "benchyard.checks.tools",
    "tool_cost": "benchyard.checks.tools",
    "llm_rubric": "benchyard.checks.judge",
    "reference_match": "benchyard.checks.judge",
    "code_exec": "benchyard.checks.code_exec",
    "tests": "benchyard.checks.tests_check",
    "static": "benchyard.checks.static",
    "diff_quality": "benchyard.checks.diff_quality",
    "contains_json": "benchyard.checks.json_embedded",
    "is_valid_tool_call": "benchyard.checks.tool_calls",
    "python": "benchyard.checks.python_grader",
    "levenshtein": "benchyard.checks.similarity",
    "rouge_n": "benchyard.checks.similarity",
    "bleu": "benchyard.checks.similarity",
    "latency": "benchyard.checks.model_calls",
    "cost": "benchyard.checks.model_calls",
    "finish_reason": "benchyard.checks.model_calls",
    "is_refusal": "benchyard.checks.refusal",
    "root_cause": "benchyard.sre.check",  # SRE incidents (docs/sre.md)
    "function_call_ast": f"{_FORMATS}.bfcl.check",
    "gsm8k_answer": f"{_FORMATS}.gsm8k.check",
    "harbor_verifier": f"{_FORMATS}.harbor.check",
    "humaneval": f"{_FORMATS}.humaneval.check",
    "ifeval": f"{_FORMATS}.ifeval.check",
    "mbpp": f"{_FORMATS}.mbpp.check",
    "swebench": f"{_FORMATS}.swebench.check",
}

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
    # A code check that grades the answer alone (its code written into the verification workdir),
    # never the agent's change to its workdir: no git snapshot or patch is needed for it.
    reads_change: bool = True


_registry: dict[str, CheckType] = {}
_plugins_loaded = False


def check(
    name: str, params: type[P], *, needs_code: bool = False, reads_change: bool = True
) -> Callable[[Callable[[P, Evidence], Outcome]], Callable[[P, Evidence], Outcome]]:
    """Register a check type: `@check("regex", RegexParams)` over `def regex(params, evidence)`.

    A check may be `async`; one that runs code says `needs_code=True` and gets `evidence.code`;
    one that runs only the answer's code, never the agent's change, also says `reads_change=False`
    (its workspace then holds the pristine and verification fixtures without the change).
    A built-in name may be registered only by its own module (BUILTIN_CHECKS).
    """

    def register(
        function: Callable[[P, Evidence], Outcome],
    ) -> Callable[[P, Evidence], Outcome]:
        if BUILTIN_CHECKS.get(name, function.__module__) != function.__module__:
            raise ValueError(f"'{name}' is a built-in check type: a plugin cannot replace it")
        summary = (function.__doc__ or "").strip().splitlines()[0] if function.__doc__ else ""
        _registry[name] = CheckType(name, params, function, summary, needs_code, reads_change)
        return function

    return register


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        entry.load()


def get_check_type(name: str) -> CheckType | None:
    """The check type called `name`: a built-in's module is imported now, plugins only for a
    name that is not built in."""
    module = BUILTIN_CHECKS.get(name)
    if module is not None:
        importlib.import_module(module)
    elif name not in _registry:
        _load_plugins()
    return _registry.get(name)


def check_names() -> list[str]:
    """Every check type's name, built-in or from a plugin, without importing the built-ins."""
    _load_plugins()
    return sorted({*BUILTIN_CHECKS, *_registry})


def check_types() -> dict[str, CheckType]:
    """Every check type, all their modules imported."""
    for module in dict.fromkeys(BUILTIN_CHECKS.values()):
        importlib.import_module(module)
    _load_plugins()
    return dict(_registry)
