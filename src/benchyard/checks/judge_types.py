"""The check types graded by the judge model (checks/judge.py), read from the registry's table of
built-ins so that a run can refuse them when no judge is configured without importing the judge
and its HTTP client."""

from __future__ import annotations

from benchyard.checks.registry import BUILTIN_CHECKS

JUDGE_MODULE = "benchyard.checks.judge"
JUDGE_CHECK_TYPES = frozenset(
    name for name, module in BUILTIN_CHECKS.items() if module == JUDGE_MODULE
)
