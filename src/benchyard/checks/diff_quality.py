"""`diff_quality`: the agent's patch applies, is small enough, touches only allowed paths and leaves
the test files alone; what it does to the test machinery (patch_scan.py) is noted, or fails it with
`fail_suspicious`. Reads the patch only; nothing runs."""

from __future__ import annotations

from pydantic import Field

from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.code_support import matches_any, workspace
from benchyard.checks.patch_scan import TEST_FILE_PATTERNS, scan_patch, suspicious_note
from benchyard.checks.registry import check
from benchyard.runner.patches import FileChange

DEFAULT_PROTECTED = list(TEST_FILE_PATTERNS)
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
    fail_suspicious: bool = Field(
        default=False,
        description="Fail a patch that changes the test machinery (patch_scan.py: a replaced "
        "unittest.TestCase.run, a tracing hook, sys.modules or builtins rewritten, an early exit, "
        "a module standing in for the standard library's); by default it is only noted.",
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
    outside = [c for c in changes if not matches_any(c.path, params.allowed_paths or ["**"])]
    protected = [c for c in changes if matches_any(c.path, params.protected_paths)]
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
    findings = scan_patch(code.patch)
    if params.fail_suspicious:
        changes_tests = f"changes the test machinery ({len(findings)} finding(s))"
        constraints.append((not findings, changes_tests))
    note = suspicious_note(findings)
    problems = [problem for met, problem in constraints if not met]
    if problems:
        score = 1.0 - len(problems) / len(constraints)
        return CheckResult(False, score, f"patch applies, {size}; " + "; ".join(problems) + note)
    return CheckResult.of(True, f"patch applies, {size}; paths allowed, tests untouched{note}")


def _paths(changes: list[FileChange]) -> str:
    shown = ", ".join(f"{c.path} ({c.status})" for c in changes[:SHOWN_PATHS])
    return shown + (f" and {len(changes) - SHOWN_PATHS} more" if len(changes) > SHOWN_PATHS else "")
