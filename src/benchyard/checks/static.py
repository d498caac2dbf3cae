"""`static`: syntax and lint checks, and forbidden patterns, over files of the verification workdir
(or the code in the answer). The scan runs in the sandbox and never imports what it reads."""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import Field, field_validator

from benchyard.checks.base import (
    CheckFailedToRun,
    CheckParams,
    CheckResult,
    CodeWorkspace,
    Evidence,
)
from benchyard.checks.code_support import (
    answer_code,
    exit_hint,
    run_model_code,
    run_script,
    tail,
    workspace,
)
from benchyard.checks.registry import check

LintRule = Literal["unused-import", "bare-except", "star-import", "mutable-default"]
SCAN_TIMEOUT_SEC = 60.0
SHOWN_FINDINGS = 5


class StaticParams(CheckParams):
    source: Literal["files", "answer"] = Field(
        default="files",
        description="Scan files of the verification workdir, or the code in the answer.",
    )
    files: list[str] = Field(
        default_factory=lambda: ["**/*.py"], description="Glob patterns of the files to scan."
    )
    only_changed: bool = Field(
        default=False, description="Scan only the files the agent's patch added or modified."
    )
    syntax: bool = Field(default=True, description="Python and JSON files must parse.")
    lint: list[LintRule] = Field(default_factory=list)
    forbidden: list[str] = Field(
        default_factory=list, description="Regular expressions that no scanned file may match."
    )
    command: str | None = Field(
        default=None, description="A lint command run in the verification workdir; must exit 0."
    )
    timeout_sec: float = Field(default=SCAN_TIMEOUT_SEC, gt=0)

    @field_validator("forbidden")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(
                    f"'{pattern}' is not a valid regular expression: {error}"
                ) from None
        return patterns


@check("static", StaticParams, needs_code=True)
async def static(params: StaticParams, evidence: Evidence) -> CheckResult:
    """Files (or the answer's code) parse, pass the lint rules and match no forbidden pattern."""
    code = workspace(evidence, "static")
    files, only = params.files, None
    if params.source == "answer":
        files = ["solution.py"]
        code.write_file("solution.py", answer_code(evidence.answer))
    elif params.only_changed:
        only = [change.path for change in code.changes if change.status != "deleted"]
    config = {
        "files": files,
        "only": only,
        "syntax": params.syntax,
        "lint": params.lint,
        "forbidden": params.forbidden,
    }
    scan = await run_script(
        code, "static_scan", [json.dumps(config)], timeout_sec=params.timeout_sec
    )
    try:
        report = json.loads(scan.stdout)
        checked, findings = list(report["checked"]), list(report["findings"])
    except (ValueError, KeyError, TypeError, RecursionError) as error:
        raise CheckFailedToRun(
            f"the static scan gave no report ({error}): {tail(scan.stderr)}"
        ) from None
    problems = [f"{f['file']}:{f['line']}: {f['rule']}: {f['message']}" for f in findings]
    if params.command is not None:
        problems += await _lint_command(params, code)
    if not checked and params.command is None:
        return CheckResult.of(False, f"no file matches {', '.join(files)}")
    if problems:
        shown = "; ".join(problems[:SHOWN_FINDINGS])
        more = (
            f" (and {len(problems) - SHOWN_FINDINGS} more)"
            if len(problems) > SHOWN_FINDINGS
            else ""
        )
        return CheckResult.of(False, f"{len(problems)} problem(s): {shown}{more}")
    return CheckResult.of(True, f"{len(checked)} file(s) clean")


async def _lint_command(params: StaticParams, code: CodeWorkspace) -> list[str]:
    assert params.command is not None
    argv = ["/bin/sh", "-c", params.command]
    outcome = await run_model_code(code, argv, timeout_sec=params.timeout_sec)
    if outcome.timed_out:
        return [f"lint command timed out after {params.timeout_sec:g}s"]
    if outcome.returncode != 0:
        return [
            f"lint command exited {outcome.returncode}{exit_hint(outcome.returncode)}: "
            f"{tail(outcome.stdout + outcome.stderr)}"
        ]
    return []
