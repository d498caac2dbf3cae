"""`swebench`: the agent's patch evaluated as SWE-bench's harness evaluates a prediction (see
formats/swebench/evaluation.py): applied in a fresh container of the instance's image, the test patch
over it, the tests run, FAIL_TO_PASS and PASS_TO_PASS graded by the rules of swebench `rules`
(5.0.2 by default, or 4.1); passed when resolved. An evaluation the 5.x rules call invalid (no test
ran: `infra_failure`) is an infrastructure error, never the agent's failure."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from benchyard.checks.base import CheckFailedToRun, CheckParams, CheckResult, Evidence
from benchyard.checks.code_support import workspace
from benchyard.checks.registry import check


class SweBenchParams(CheckParams):
    instance_id: str
    image: str = Field(min_length=1, description="The instance's image (local; never pulled).")
    base_commit: str
    test_patch: str
    fail_to_pass: list[str] = Field(default_factory=list)
    pass_to_pass: list[str] = Field(default_factory=list)
    repo_dir: str = "/testbed"
    test_command: str = "python3 -m pytest -rA --tb=no -p no:cacheprovider {test_files}"
    timeout_sec: float = Field(default=1800.0, gt=0)
    rules: Literal["5.0.2", "4.1"] = Field(
        default="5.0.2",
        description="The swebench release whose grading rules apply: 5.0.2, or 4.1 (and earlier).",
    )


@check("swebench", SweBenchParams, needs_code=True)
async def swebench(params: SweBenchParams, evidence: Evidence) -> CheckResult:
    """The agent's patch resolves the SWE-bench instance (its FAIL_TO_PASS and PASS_TO_PASS tests)."""
    from benchyard.formats.containers import ContainerUnavailable
    from benchyard.formats.swebench.evaluation import Instance, evaluate_patch

    code = workspace(evidence, "swebench")
    if code.patch_error is not None:
        return CheckResult.of(False, f"patch not applied: {code.patch_error}; not resolved")
    instance = Instance(**params.model_dump())
    try:
        report = await evaluate_patch(instance, code.patch)
    except ContainerUnavailable as error:
        raise CheckFailedToRun(str(error)) from error
    if report.infra_failure:
        raise CheckFailedToRun(report.summary())
    return CheckResult.of(report.resolved, report.summary())
