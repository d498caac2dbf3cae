"""`harbor_verifier`: a Harbor (or Terminal-Bench v1) task's verifier, run in a fresh container of
the task's image on the agent's work.

The verification workdir (the agent's files, its patch applied) is copied over the task's working
directory in the image (`/app` by default), the task's tests are copied to `/tests`, and the test
script runs (`bash /tests/test.sh` for Harbor; the task's `run-tests.sh` with `TEST_DIR=/tests` for
Terminal-Bench). The reward is read from `/logs/verifier/reward.txt` (one number) or
`reward.json` (named numbers, each kept as a score of its own and shown in the report), read from
the host without following links, without blocking, capped; without a reward file, from pytest's
outcome: every test in its `-rA` summary passed (Terminal-Bench's rule). Passed when every reward
is 1 (or more); the score is the mean reward.
"""

from __future__ import annotations

import json
import math
import shlex
from pathlib import Path
from typing import Literal

from pydantic import Field

from benchyard.checks.base import CheckFailedToRun, CheckParams, CheckResult, Evidence
from benchyard.checks.code_support import tail, workspace
from benchyard.checks.registry import check
from benchyard.untrusted import UntrustedFileRefused, read_capped_under, temporary_directory

REWARD_CAP_BYTES = 64 * 1024
REWARDS_PREFIX = "rewards: "


class HarborParams(CheckParams):
    image: str = Field(min_length=1, description="The task's image, built locally.")
    tests: str = Field(description="The task's tests directory, relative to the scenario file.")
    layout: Literal["harbor", "terminal-bench"] = "harbor"
    run_tests: str | None = Field(
        default=None, description="Terminal-Bench: run-tests.sh, relative to the scenario file."
    )
    workdir: str = Field(default="/app", description="The task's working directory in the image.")
    timeout_sec: float = Field(default=600.0, gt=0, description="The verifier's time limit.")
    memory_mb: int = Field(default=4096, ge=64)

    def benchmark_files(self) -> dict[str, str]:
        """The tests directory (mounted into the verifier's container) and run-tests.sh: the
        loader keeps both inside the benchmark, links included, as it keeps fixture sources."""
        named = {"tests": self.tests}
        if self.run_tests is not None:
            named["run_tests"] = self.run_tests
        return named

    def benchmark_file_problem(self, name: str, path: Path) -> str | None:
        if name == "tests" and not path.is_dir():
            return f"'{self.tests}' is not a directory"
        if name == "run_tests" and not path.is_file():
            return f"'{self.run_tests}' is not a file"
        return None


def verifier_script(params: HarborParams) -> str:
    workdir = shlex.quote(params.workdir)
    run = (
        "bash /tests/test.sh"
        if params.layout == "harbor"
        else "TEST_DIR=/tests bash /benchyard/run-tests.sh"
    )
    return f"""set -u
mkdir -p {workdir} /tests /logs/verifier
cp -a /benchyard-work/. {workdir}/
cp -a /benchyard-tests/. /tests/
cd {workdir}
{run}
echo "benchyard: verifier exited $?" >&2
"""


def read_rewards(out_dir: Path) -> dict[str, float] | None:
    """The named rewards the verifier wrote (`reward` for reward.txt), None without a file."""
    for name in ("reward.json", "reward.txt"):
        try:
            raw = read_capped_under(out_dir, name, REWARD_CAP_BYTES)
        except FileNotFoundError:
            continue
        except UntrustedFileRefused as error:
            raise ValueError(f"{name} is {error.strerror}") from None
        text = raw.decode("utf-8", errors="replace").strip()
        if name == "reward.txt":
            return {"reward": _number(text, name)}
        data = json.loads(text)
        if not isinstance(data, dict) or not data:
            raise ValueError("reward.json is not an object of named numbers")
        return {str(key): _number(value, f"reward.json {key}") for key, value in data.items()}
    return None


def _number(value: object, where: str) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{where} is not a number: {str(value)[:40]!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{where} is not a finite number")
    return number


@check("harbor_verifier", HarborParams, needs_code=True)
async def harbor_verifier(params: HarborParams, evidence: Evidence) -> CheckResult:
    """The task's verifier, in a fresh container of its image: its reward (or pytest's outcome)."""
    from benchyard.formats.containers import ContainerUnavailable, require_image, run_script
    from benchyard.formats.swebench.evaluation import parse_pytest_log

    code = workspace(evidence, "harbor_verifier")
    if code.patch_error is not None:
        return CheckResult.of(False, f"the agent's change could not be applied: {code.patch_error}")
    scenario_dir = getattr(code, "scenario_dir", None)
    if scenario_dir is None:
        raise CheckFailedToRun("harbor_verifier needs the scenario's directory")
    tests = (Path(scenario_dir) / params.tests).resolve()
    files: dict[str, bytes] = {}
    if params.run_tests is not None:
        files["run-tests.sh"] = (Path(scenario_dir) / params.run_tests).read_bytes()
    try:
        require_image(params.image)
    except ContainerUnavailable as error:
        raise CheckFailedToRun(str(error)) from error
    with temporary_directory("benchyard-verifier-") as scratch:
        out_dir = scratch / "logs"
        out_dir.mkdir()
        out_dir.chmod(0o777)
        outcome = await run_script(
            params.image,
            verifier_script(params),
            files=files,
            timeout_sec=params.timeout_sec,
            memory_mb=params.memory_mb,
            mounts={code.workdir: "/benchyard-work", tests: "/benchyard-tests"},
            out_dir=out_dir,
            out_target="/logs/verifier",
        )
        if outcome.timed_out:
            return CheckResult.of(False, f"the verifier timed out after {params.timeout_sec:g} s")
        try:
            rewards = read_rewards(out_dir)
        except (ValueError, json.JSONDecodeError) as error:
            return CheckResult.of(False, f"unreadable reward: {error}")
    if rewards is not None:
        score = sum(rewards.values()) / len(rewards)
        passed = all(value >= 1 for value in rewards.values())
        shown = json.dumps(rewards, sort_keys=True)
        return CheckResult(passed, round(min(1.0, max(0.0, score)), 6), f"{REWARDS_PREFIX}{shown}")
    statuses = parse_pytest_log(outcome.stdout.decode("utf-8", errors="replace"))
    failing = [test for test, status in statuses.items() if status != "PASSED"]
    if statuses and not failing:
        return CheckResult.of(True, f"no reward file; pytest: all {len(statuses)} tests passed")
    if not statuses:
        return CheckResult.of(
            False, f"no reward file and no pytest results: {tail(outcome.stderr or outcome.stdout)}"
        )
    return CheckResult.of(
        False,
        f"no reward file; pytest: {len(failing)} of {len(statuses)} did not pass "
        f"({', '.join(failing[:5])})",
    )
