"""The cost of running `code_exec`'s tests in a process apart from the solution's: 100 gradings of
a trivial solution with the tests in a separate process (the default) and 100 with the tests in
the solution's own process (`same_process: true`, as before), interleaved, one at a time, in the
same run and the same sandbox. Each grading is the check alone (its sandbox, the interpreters, the
tests), in a fresh verification workspace. Prints the median and spread of both, in ms per
grading, and their ratio.
Run: .venv/bin/python -P bench/code_exec.py [bwrap|docker]  (-P: bench/queue.py is no `queue`)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchyard.checks.base import CheckResult, Evidence
from benchyard.checks.registry import get_check_type
from benchyard.runner.loop import run_async
from benchyard.runner.two_phase import CodingAttempt
from benchyard.runner.workdir import make_scratch_layout, prepare_dirs
from benchyard.sandbox.registry import build_sandbox
from benchyard.spec.models import Scenario

GRADINGS = 100
ANSWER = "```python\ndef add(a, b):\n    return a + b\n```"
TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"
OUTPUT_CAP_BYTES = 1024 * 1024
SCENARIO = Scenario.model_validate(
    {"id": "s1", "stimulus": "add", "checks": [{"type": "code_exec", "tests": TESTS}]}
)


async def grade(attempt: CodingAttempt, same_process: bool) -> float:
    """Seconds of one grading, in a fresh verification workspace; a failure stops the bench."""
    kind = get_check_type("code_exec")
    assert kind is not None
    params = kind.params.model_validate({"tests": TESTS, "same_process": same_process})
    async with attempt.open_workspace() as code:
        evidence = Evidence(answer=ANSWER, scenario=SCENARIO, code=code)
        started = time.perf_counter()
        result = kind.evaluate(params, evidence)
        result = await result if not isinstance(result, CheckResult) else result
        elapsed = time.perf_counter() - started
    if not result.passed:
        raise SystemExit(f"a grading failed: {result.reason}")
    return elapsed


async def measure(scratch: Path, sandbox_name: str) -> dict[bool, list[float]]:
    bench = scratch / "bench"
    bench.mkdir()
    make_scratch_layout(scratch)
    dirs = prepare_dirs(scratch, "a1", SCENARIO, bench)
    sandbox = build_sandbox(sandbox_name)
    attempt = await CodingAttempt(
        SCENARIO, bench, dirs.workdir, scratch / "verify" / "a1", sandbox, OUTPUT_CAP_BYTES
    ).start()
    await attempt.collect()
    times: dict[bool, list[float]] = {False: [], True: []}
    await grade(attempt, False)  # warm the file cache
    await grade(attempt, True)
    for _ in range(GRADINGS):
        for same_process in (False, True):
            times[same_process].append(await grade(attempt, same_process))
    attempt.remove()
    dirs.remove()
    return times


def describe(label: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    q1, median, q3 = statistics.quantiles(ms, n=4)
    return f"{label:34} median {median:6.1f} ms   IQR {q1:6.1f}-{q3:6.1f} ms   min {ms[0]:6.1f} ms"


def main() -> None:
    sandbox_name = sys.argv[1] if len(sys.argv) > 1 else "bwrap"
    with tempfile.TemporaryDirectory() as scratch:
        times = run_async(measure(Path(scratch), sandbox_name))
    apart, same = (statistics.median(times[mode]) for mode in (False, True))
    print(f"{GRADINGS} code_exec gradings of each mode, interleaved, {sandbox_name} sandbox")
    print(describe("tests in a separate process", times[False]))
    print(describe("tests in the solution's process", times[True]))
    print(f"ratio of medians {apart / same:.2f}, {1000 * (apart - same):+.1f} ms per grading")


if __name__ == "__main__":
    main()
