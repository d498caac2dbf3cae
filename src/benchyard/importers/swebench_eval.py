"""SWE-bench's evaluation of one patch, as its harness does it: in a fresh container of the
instance's image, apply the patch to the repository (`git apply --verbose`, then with `--reject`,
then `patch --batch --fuzz=5 -p1`), restore the test files and apply the test patch, run the tests,
parse the log (pytest's `-rA` lines), and grade FAIL_TO_PASS and PASS_TO_PASS:

- a test succeeds when the log shows it PASSED or XFAIL, and fails when it is missing or FAILED or
  ERROR (a SKIPPED test is neither, as in the official grading);
- the instance is resolved when every FAIL_TO_PASS and every PASS_TO_PASS test that succeeded or
  failed succeeded (an empty list counts as all succeeded);
- the report has the official per-instance fields: `patch_is_None`, `patch_exists`,
  `patch_successfully_applied`, `resolved` and `tests_status`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

from benchyard.importers.containers import require_image, run_script

APPLIED = ">>>>> Applied Patch"
APPLY_FAILED = ">>>>> Patch Apply Failed"
START = ">>>>> Start Test Output"
END = ">>>>> End Test Output"
STATUSES = ("PASSED", "FAILED", "SKIPPED", "ERROR", "XFAIL")
DEFAULT_TEST_COMMAND = "python3 -m pytest -rA --tb=no -p no:cacheprovider {test_files}"
_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


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
    def split(tests: list[str]) -> dict[str, list[str]]:
        success = [t for t in tests if statuses.get(t) in ("PASSED", "XFAIL")]
        failure = [t for t in tests if t not in statuses or statuses[t] in ("FAILED", "ERROR")]
        return {"success": success, "failure": failure}

    empty: dict[str, list[str]] = {"success": [], "failure": []}
    return {
        "FAIL_TO_PASS": split(instance.fail_to_pass),
        "PASS_TO_PASS": split(instance.pass_to_pass),
        "FAIL_TO_FAIL": dict(empty),
        "PASS_TO_FAIL": dict(empty),
    }


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

    def official(self) -> dict[str, Any]:
        return {
            "patch_is_None": self.patch_is_None,
            "patch_exists": self.patch_exists,
            "patch_successfully_applied": self.patch_successfully_applied,
            "resolved": self.resolved,
            "tests_status": self.tests_status,
        }

    def summary(self) -> str:
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
            instance.instance_id, patch is None, False, False, False, empty_statuses
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
            instance.instance_id, False, True, False, False, empty_statuses, log[-2000:]
        )
    statuses = parse_pytest_log(test_output(log))
    tests_status = grade_statuses(instance, statuses)
    resolved = _rate(tests_status["FAIL_TO_PASS"]) == 1 and _rate(tests_status["PASS_TO_PASS"]) == 1
    return InstanceReport(
        instance.instance_id, False, True, True, resolved, tests_status, log[-2000:]
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
