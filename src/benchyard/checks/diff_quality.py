"""`diff_quality`: the agent's patch applies, is small enough, touches only allowed paths and leaves
the test files alone. Reads the patch only; nothing runs."""

from __future__ import annotations

import functools
import re

from pydantic import Field

from benchyard.checks.base import CheckParams, CheckResult, Evidence, FileChange
from benchyard.checks.code_support import workspace
from benchyard.checks.registry import check

DEFAULT_PROTECTED = ["tests/**", "test/**", "**/test_*.py", "**/*_test.py", "**/conftest.py"]
SHOWN_PATHS = 5


class DiffQualityParams(CheckParams):
    require_change: bool = Field(default=True, description="An empty patch fails.")
    max_files: int | None = Field(default=None, ge=0, description="Most files changed.")
    max_lines: int | None = Field(
        default=None, ge=0, description="Most lines added plus deleted (binary files count 0)."
    )
    allowed_paths: list[str] | None = Field(
        default=None, description="Glob patterns; every changed path must match one."
    )
    protected_paths: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PROTECTED),
        description="Glob patterns of paths the patch must not touch (the tests, by default).",
    )


@check("diff_quality", DiffQualityParams, needs_code=True)
def diff_quality(params: DiffQualityParams, evidence: Evidence) -> CheckResult:
    """The patch applies, is small, touches only allowed paths and leaves the tests alone."""
    code = workspace(evidence, "diff_quality")
    if code.patch_error is not None:
        return CheckResult.of(False, f"patch not applied: {code.patch_error}")
    changes = code.changes
    lines = sum((c.added_lines or 0) + (c.deleted_lines or 0) for c in changes)
    size = f"{len(changes)} file(s), {lines} line(s) changed"
    outside = [c for c in changes if not _matches_any(c.path, params.allowed_paths or ["**"])]
    protected = [c for c in changes if _matches_any(c.path, params.protected_paths)]
    constraints = [  # (met, what is wrong otherwise), one per constraint asked for
        (bool(changes) or not params.require_change, "the agent changed nothing"),
        (not protected, f"touches protected paths: {_paths(protected)}"),
        (not outside, f"outside the allowed paths: {_paths(outside)}"),
    ]
    if params.max_files is not None:
        too_many = f"{len(changes)} files changed, at most {params.max_files} allowed"
        constraints.append((len(changes) <= params.max_files, too_many))
    if params.max_lines is not None:
        too_long = f"{lines} lines changed, at most {params.max_lines} allowed"
        constraints.append((lines <= params.max_lines, too_long))
    problems = [problem for met, problem in constraints if not met]
    if problems:
        score = 1.0 - len(problems) / len(constraints)
        return CheckResult(False, score, f"patch applies, {size}; " + "; ".join(problems))
    return CheckResult.of(True, f"patch applies, {size}; paths allowed, tests untouched")


def _paths(changes: list[FileChange]) -> str:
    shown = ", ".join(f"{c.path} ({c.status})" for c in changes[:SHOWN_PATHS])
    return shown + (f" and {len(changes) - SHOWN_PATHS} more" if len(changes) > SHOWN_PATHS else "")


def _matches_any(path: str, patterns: list[str]) -> bool:
    return any(glob_regex(pattern).fullmatch(path) for pattern in patterns)


@functools.cache
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A path glob as a regex over whole paths: `*` and `?` stay within one directory, `**` spans any
    number of directories (none too): `**/test_*.py` matches `test_a.py` and `pkg/tests/test_a.py`."""
    segments = pattern.strip("/").split("/")
    regex = ""
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
            continue
        regex += "".join(
            "[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char)
            for char in segment
        )
        regex += "" if last else "/"
    return re.compile(regex)
