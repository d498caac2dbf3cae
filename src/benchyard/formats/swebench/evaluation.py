"""SWE-bench's evaluation of one patch, as its harness does it: in a fresh container of the
instance's image, apply the patch to the repository (`git apply --verbose`, then with `--reject`,
then `patch --batch --fuzz=5 -p1`), restore the test files and apply the test patch, run the tests,
parse the log (pytest's `-rA` lines), and grade FAIL_TO_PASS and PASS_TO_PASS by the rules of
the swebench release named (`rules`; docs/importers.md#swe-bench):

- **swebench 5.0.2** (the default): a test succeeds when the log shows it PASSED or XFAIL, and
  fails when it is missing or FAILED or ERROR; a SKIPPED FAIL_TO_PASS test fails (the fix was never
  shown to work), a SKIPPED PASS_TO_PASS test succeeds (it did not break). A test id cut short
  inside its parameters (`test_x[a-long-param`, no closing bracket) stands for the logged tests
  it begins. A log where no test ran at all is no grading: the report is an infrastructure
  failure (`infra_failure`, `infra_failure_reason`), not resolved, and the `swebench` check an
  error, never the agent's failure.
- **swebench 4.1** (and earlier): as above, but a SKIPPED test is neither success nor failure, ids
  match exactly, and a log without tests grades every test as missing.
- the instance is resolved when every FAIL_TO_PASS and every PASS_TO_PASS test that succeeded or
  failed succeeded (an empty list counts as all succeeded);
- the report has the official per-instance fields: `patch_is_None`, `patch_exists`,
  `patch_successfully_applied`, `resolved` and `tests_status`, and with the 5.x rules
  `infra_failure` and `infra_failure_reason`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any, Literal, get_args

from benchyard.formats.containers import require_image, run_script

GradingRules = Literal["5.0.2", "4.1"]
RULES: tuple[str, ...] = get_args(GradingRules)
DEFAULT_RULES: GradingRules = "5.0.2"
SUCCEEDED = ("PASSED", "XFAIL")
FAILED = ("FAILED", "ERROR")
NO_TEST_RAN = "no test ran: the test output holds no test status"

APPLIED = ">>>>> Applied Patch"
APPLY_FAILED = ">>>>> Patch Apply Failed"
START = ">>>>> Start Test Output"
END = ">>>>> End Test Output"
STATUSES = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")
DEFAULT_TEST_COMMAND = "python3 -m pytest -rA --tb=no -p no:cacheprovider {test_files}"
_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


def grading_rules(name: str) -> GradingRules:
    """The rules named (`5.0.2` or `4.1`); ValueError naming the choices otherwise."""
    if name == "5.0.2":
        return "5.0.2"
    if name == "4.1":
        return "4.1"
    raise ValueError(f"'{name}' is not one of {', '.join(RULES)}")


@dataclass(frozen=True)
class Instance:
    instance_id: str
    image: str
    base_commit: str
    test_patch: str
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    repo_dir: str = "/testbed"
    test_command: str = DEFAULT_TEST_COMMAND
    timeout_sec: float = 1800.0
    rules: GradingRules = DEFAULT_RULES  # the swebench release whose grading rules apply


def test_files(test_patch: str) -> list[str]:
    """The files the test patch touches (the official eval script runs and restores these)."""
    return list(dict.fromkeys(match[2] for match in _DIFF_FILE.finditer(test_patch)))


def eval_script(instance: Instance, with_patch: bool) -> str:
    files = " ".join(shlex.quote(f) for f in test_files(instance.test_patch))
    command = instance.test_command.replace("{test_files}", files)
    apply = (
        f"""if git apply --verbose /benchyard/model.patch \\
   || git apply --verbose --reject /benchyard/model.patch \\
   || patch --batch --fuzz=5 -p1 -i /benchyard/model.patch; then
  echo '{APPLIED}'
else
  echo '{APPLY_FAILED}'
  exit 0
fi
"""
        if with_patch
        else ""
    )
    return f"""set -u
cd {shlex.quote(instance.repo_dir)}
git config --global --add safe.directory '*' 2>/dev/null
{apply}git checkout {shlex.quote(instance.base_commit)} -- {files} 2>/dev/null
git apply --verbose /benchyard/test.patch
echo '{START}'
{command}
echo '{END}'
"""


def parse_pytest_log(log: str) -> dict[str, str]:
    """Test -> status from pytest's `-rA` summary lines (`PASSED path::test`, `FAILED path::test -
    why`), as SWE-bench's parser reads them."""
    statuses: dict[str, str] = {}
    for line in log.splitlines():
        if not line.startswith(STATUSES):
            continue
        if line.startswith("FAILED"):
            line = line.replace(" - ", " ")
        parts = line.split()
        if len(parts) > 1:
            statuses[parts[1]] = parts[0]
    return statuses


def test_output(log: str) -> str:
    start = log.find(START)
    if start < 0:
        return ""
    end = log.find(END, start)
    return log[start + len(START) : end if end >= 0 else len(log)]


def grade_statuses(instance: Instance, statuses: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """FAIL_TO_PASS and PASS_TO_PASS split into success and failure by `instance.rules`; a test
    in neither (4.1: SKIPPED) is left out of both."""
    skipped_fails = instance.rules != "4.1"

    def split(tests: list[str], skipped: str | None) -> dict[str, list[str]]:
        success, failure = [], []
        for test in tests:
            outcome = _outcome(test, statuses, instance.rules, skipped)
            if outcome == "success":
                success.append(test)
            elif outcome == "failure":
                failure.append(test)
        return {"success": success, "failure": failure}

    empty: dict[str, list[str]] = {"success": [], "failure": []}
    return {
        "FAIL_TO_PASS": split(instance.fail_to_pass, "failure" if skipped_fails else None),
        "PASS_TO_PASS": split(instance.pass_to_pass, "success" if skipped_fails else None),
        "FAIL_TO_FAIL": dict(empty),
        "PASS_TO_FAIL": dict(empty),
    }


def _outcome(test: str, statuses: dict[str, str], rules: str, skipped: str | None) -> str | None:
    """success, failure or None (neither) for one listed test: its logged status, or with the 5.x
    rules those of the tests a truncated parametrized id begins; SKIPPED counts as `skipped`."""
    found = [statuses[test]] if test in statuses else _prefixed(test, statuses, rules)
    if not found or any(status in FAILED for status in found):
        return "failure"
    if all(status in SUCCEEDED for status in found):
        return "success"
    if any(status == "SKIPPED" for status in found):
        return skipped
    return None  # a status of no consequence (none is parsed today)


def _prefixed(test: str, statuses: dict[str, str], rules: str) -> list[str]:
    """With the 5.x rules, a parametrized id cut short before its closing bracket (long ids are
    truncated in the instances' lists) matches the logged ids it begins."""
    if rules == "4.1" or "[" not in test or test.endswith("]"):
        return []
    return [status for logged, status in statuses.items() if logged.startswith(test)]


def _rate(status: dict[str, list[str]]) -> float:
    total = len(status["success"]) + len(status["failure"])
    return 1.0 if total == 0 else len(status["success"]) / total


@dataclass
class InstanceReport:
    instance_id: str
    patch_is_None: bool
    patch_exists: bool
    patch_successfully_applied: bool
    resolved: bool
    tests_status: dict[str, dict[str, list[str]]]
    log_tail: str = ""
    rules: GradingRules = DEFAULT_RULES
    infra_failure: bool = False  # 5.x: the evaluation itself failed (no test ran)
    infra_failure_reason: str | None = None

    def official(self) -> dict[str, Any]:
        """The per-instance fields of the official report of `rules`' release."""
        fields: dict[str, Any] = {
            "patch_is_None": self.patch_is_None,
            "patch_exists": self.patch_exists,
            "patch_successfully_applied": self.patch_successfully_applied,
            "resolved": self.resolved,
            "tests_status": self.tests_status,
        }
        if self.rules != "4.1":
            fields["infra_failure"] = self.infra_failure
            fields["infra_failure_reason"] = self.infra_failure_reason
        return fields

    def summary(self) -> str:
        if self.infra_failure:
            return f"invalid evaluation (swebench {self.rules}): {self.infra_failure_reason}"
        if not self.patch_exists:
            return "no patch: not resolved"
        if not self.patch_successfully_applied:
            return "the patch does not apply: not resolved"
        parts = []
        for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            status = self.tests_status[key]
            count = len(status["success"]) + len(status["failure"])
            failing = f" (failing: {', '.join(status['failure'][:5])})" if status["failure"] else ""
            parts.append(f"{key} {len(status['success'])}/{count}{failing}")
        verdict = "resolved" if self.resolved else "not resolved"
        return f"patch applied; {'; '.join(parts)}: {verdict}"


async def evaluate_patch(instance: Instance, patch: str | None) -> InstanceReport:
    """The official report of `patch` on `instance`."""
    empty_statuses = grade_statuses(instance, {})
    if patch is None or not patch.strip():
        return InstanceReport(
            instance.instance_id,
            patch is None,
            False,
            False,
            False,
            empty_statuses,
            rules=instance.rules,
        )
    require_image(instance.image)
    text = patch if patch.endswith("\n") else patch + "\n"
    outcome = await run_script(
        instance.image,
        eval_script(instance, with_patch=True),
        files={"model.patch": text.encode(), "test.patch": instance.test_patch.encode()},
        timeout_sec=instance.timeout_sec,
    )
    log = outcome.stdout.decode("utf-8", errors="replace")
    applied = APPLIED in log and APPLY_FAILED not in log.split(APPLIED, 1)[0]
    if not applied:
        return InstanceReport(
            instance.instance_id,
            False,
            True,
            False,
            False,
            empty_statuses,
            log[-2000:],
            rules=instance.rules,
        )
    return grade_log(instance, log)


def grade_log(instance: Instance, log: str) -> InstanceReport:
    """The report of an applied patch from the evaluation's log (its test output between the
    start and end markers), by `instance.rules`."""
    statuses = parse_pytest_log(test_output(log))
    tests_status = grade_statuses(instance, statuses)
    if not statuses and instance.rules != "4.1":
        return InstanceReport(
            instance.instance_id,
            False,
            True,
            True,
            False,
            tests_status,
            log[-2000:],
            rules=instance.rules,
            infra_failure=True,
            infra_failure_reason=NO_TEST_RAN,
        )
    resolved = _rate(tests_status["FAIL_TO_PASS"]) == 1 and _rate(tests_status["PASS_TO_PASS"]) == 1
    return InstanceReport(
        instance.instance_id,
        False,
        True,
        True,
        resolved,
        tests_status,
        log[-2000:],
        rules=instance.rules,
    )


async def grade_predictions(
    instances: dict[str, Instance], predictions: list[dict[str, Any]], jobs: int = 2
) -> dict[str, InstanceReport]:
    """Each prediction's report (`instance_id`, `model_patch`), `jobs` containers at a time."""
    import asyncio

    semaphore = asyncio.Semaphore(max(1, jobs))

    async def one(prediction: dict[str, Any]) -> InstanceReport:
        async with semaphore:
            patch = prediction.get("model_patch")
            return await evaluate_patch(
                instances[str(prediction["instance_id"])], patch if isinstance(patch, str) else None
            )

    reports = await asyncio.gather(*(one(p) for p in predictions))
    return {report.instance_id: report for report in reports}
