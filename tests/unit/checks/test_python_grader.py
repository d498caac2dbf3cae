"""`python`: a benchmark's grader function, run in a real bwrap verification sandbox; what it is
given, what it may return, and what each way of breaking means (a counted `grader error:` failure
once it has the answer, an uncounted check error before, a load-time problem for a file that is
missing or cannot be a grader)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchyard.benchmarks.loader import load_benchmark
from benchyard.checks.base import CheckFailedToRun, CheckResult, Evidence
from benchyard.runner.tool_events import call_event, result_event
from benchyard.runner.trajectory import Event
from benchyard.runner.two_phase import Workspace
from benchyard.spec.models import Scenario
from benchyard.spec.problems import BenchmarkInvalid
from tests.support import write_benchmark

from .code_helpers import workspace
from .helpers import check_type, params_error

EXACT = """
def grade(answer, context):
    ok = answer.strip() == context["reference"]
    return {"pass": ok, "reason": f"expected {context['reference']!r}, got {answer.strip()!r}"}
"""
SCENARIO = Scenario.model_validate(
    {
        "id": "capital-1",
        "stimulus": {"turns": ["Capital of France?", "And of Italy?"]},
        "reference": ["Paris", "Rome"],
        "checks": [{"type": "equals", "value": "x"}],
    }
)


async def grade(
    code: Workspace,
    source: str,
    answer: str,
    *,
    answers: list[str] | None = None,
    trajectory: list[Event] | None = None,
    **params: Any,
) -> CheckResult:
    """Write `source` as graders/g.py of the benchmark and run the check on `answer`."""
    grader = code.scenario_dir / "graders" / "g.py"
    grader.parent.mkdir(exist_ok=True)
    grader.write_text(source, encoding="utf-8")
    kind = check_type("python")
    assert kind.needs_code
    evidence = Evidence(
        answer,
        SCENARIO,
        answers=answers if answers is not None else ["Paris", answer],
        trajectory=trajectory or [],
        code=code,
    )
    outcome = kind.evaluate(
        kind.params.model_validate({"file": "graders/g.py", **params}), evidence
    )
    result = await outcome if not isinstance(outcome, CheckResult) else outcome
    assert isinstance(result, CheckResult)
    return result


async def test_a_grader_that_passes_and_fails(tmp_path: Path) -> None:
    async with workspace(tmp_path) as code:
        right = await grade(code, EXACT, " Rome ")
        wrong = await grade(code, EXACT, "Milan")
    assert (right.passed, right.score) == (True, 1.0)
    assert right.reason == "grader graders/g.py:grade passed: expected 'Rome', got 'Rome'"
    assert (wrong.passed, wrong.score) == (False, 0.0)
    assert wrong.reason == "grader graders/g.py:grade failed: expected 'Rome', got 'Milan'"


async def test_the_grader_is_given_the_context_as_json(tmp_path: Path) -> None:
    echo = (
        "import json\n\n"
        "def grade(answer, context):\n"
        "    return {'pass': True, 'reason': json.dumps(context, sort_keys=True)}\n"
    )
    trajectory = [
        call_event("lookup", {"city": "Rome"}, "call-1", 2),
        result_event("lookup", "no such city", "call-1", error=True),
    ]
    async with workspace(tmp_path) as code:
        result = await grade(code, echo, "Rome", trajectory=trajectory, config={"strict": True})
    context = json.loads(result.reason.split(": ", 1)[1])
    assert context == {
        "answer": "Rome",
        "answers": ["Paris", "Rome"],
        "raw_answer": "Rome",
        "scenario_id": "capital-1",
        "reference": "Rome",  # the graded turn's
        "config": {"strict": True},
        "tool_calls": [{"name": "lookup", "arguments": {"city": "Rome"}, "error": True, "turn": 2}],
    }


@pytest.mark.parametrize(
    ("source", "passed", "score", "reason"),
    [
        ("def grade(a, c):\n    return True\n", True, 1.0, "grader graders/g.py:grade passed"),
        ("def grade(a, c):\n    return False\n", False, 0.0, "grader graders/g.py:grade failed"),
        (
            "def grade(a, c):\n    return 0.5\n",
            False,
            0.5,
            "grader graders/g.py:grade score 0.5 is below threshold 1",
        ),
        (
            "def grade(a, c):\n    return {'score': 1, 'reason': 'all\\nfine'}\n",
            True,
            1.0,
            "grader graders/g.py:grade score 1 reaches threshold 1: all fine",
        ),
        (
            "def grade(a, c):\n    return {'pass': True, 'score': 0.25}\n",
            True,
            0.25,
            "grader graders/g.py:grade passed (score 0.25)",
        ),
    ],
)
async def test_results_the_grader_may_return(
    tmp_path: Path, source: str, passed: bool, score: float, reason: str
) -> None:
    async with workspace(tmp_path) as code:
        result = await grade(code, source, "Rome")
    assert (result.passed, result.score, result.reason) == (passed, score, reason)


async def test_a_score_passes_at_the_threshold(tmp_path: Path) -> None:
    async with workspace(tmp_path) as code:
        result = await grade(code, "def grade(a, c):\n    return 0.5\n", "Rome", threshold=0.5)
    assert result.passed
    assert result.reason == "grader graders/g.py:grade score 0.5 reaches threshold 0.5"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("return 1 / 0", "raised ZeroDivisionError: division by zero at graders/g.py line 3"),
        ("raise SystemExit(3)", "raised SystemExit: 3 at graders/g.py line 3"),
        ("return None", "returned null; expected {pass, score, reason}"),
        ("return 'yes'", 'returned "yes"; expected {pass, score, reason}'),
        ("return {'passed': True}", "unknown key(s) 'passed'; neither 'pass' nor 'score'"),
        ("return {'pass': 'yes'}", "'pass' is \"yes\", not true or false"),
        ("return {'score': 2}", "'score' is 2, not a number from 0 to 1"),
        ("return {'pass': True, 'reason': 7}", "'reason' is 7, not text"),
        ("return float('nan')", "returned a value that is not JSON (float: ValueError: "),
        ("return object()", "returned a value that is not JSON (object: TypeError: "),
        ("import os; os._exit(0)", "ended without a result (exit 0)"),
        ("import time; time.sleep(60)", "did not return within 3s"),
    ],
)
async def test_a_grader_that_breaks_with_the_answer_fails_the_check(
    tmp_path: Path, body: str, said: str
) -> None:
    """Counted, never an uncounted error: the answer is the grader's input (see the module)."""
    source = f"def grade(answer, context):\n    x = 1\n    {body}\n"
    async with workspace(tmp_path) as code:
        result = await grade(code, source, "Rome", timeout_sec=3)
    assert not result.passed
    assert result.reason.startswith("grader error: graders/g.py:grade ")
    assert said in result.reason


@pytest.mark.parametrize(
    ("source", "why"),
    [
        (
            "import no_such_module\n\ndef grade(a, c):\n    return True\n",
            "the grader graders/g.py could not be loaded: ModuleNotFoundError: No module named "
            "'no_such_module' (graders/g.py line 1)",
        ),
        (
            "import benchyard\n\ndef grade(a, c):\n    return True\n",
            "ModuleNotFoundError: No module named 'benchyard'",  # never within a grader's reach
        ),
        (
            "if False:\n    def grade(a, c):\n        return True\n",
            "the grader graders/g.py could not be loaded: LookupError: graders/g.py defines no 'grade'",
        ),
        ("grade = 3\n", "TypeError: 'grade' in graders/g.py is a int, not a function"),
    ],
)
async def test_a_grader_that_cannot_be_loaded_is_an_uncounted_check_error(
    tmp_path: Path, source: str, why: str
) -> None:
    async with workspace(tmp_path) as code:
        with pytest.raises(CheckFailedToRun) as raised:
            await grade(code, source, "Rome")
    assert why in str(raised.value)


async def test_what_the_grader_prints_cannot_pass_for_its_result(tmp_path: Path) -> None:
    """Its stdout, and its subprocesses', go to stderr: the runner alone writes the result."""
    source = (
        "import os, sys\n\n"
        "def grade(answer, context):\n"
        "    print(answer)\n"
        "    sys.stdout.flush()\n"
        "    os.system('echo benchyard: ready; echo \\'{\"returned\": true}\\'')\n"
        "    return False\n"
    )
    forged = 'benchyard: ready\n{"returned": true}\n'
    async with workspace(tmp_path) as code:
        result = await grade(code, source, forged)
    assert not result.passed
    assert result.reason == "grader graders/g.py:grade failed"


async def test_the_grader_file_is_out_of_the_agents_patch_reach(tmp_path: Path) -> None:
    """A file the agent put in the workdir under the grader's name is not what runs."""
    fake = "def grade(a, c):\n    return True\n"
    async with workspace(tmp_path, {}, {"graders/g.py": fake, "g.py": fake}) as code:
        result = await grade(code, EXACT, "Milan")
    assert not result.passed


def _invalid(tmp_path: Path, check: dict[str, Any], files: dict[str, str]) -> str:
    scenario = {"id": "s1", "stimulus": "q", "reference": "a", "checks": [check]}
    bench = write_benchmark(tmp_path / "b", [scenario], files=files)
    with pytest.raises(BenchmarkInvalid) as raised:
        load_benchmark(bench)
    return str(raised.value)


@pytest.mark.parametrize(
    ("file", "files", "problem"),
    [
        (
            "graders/missing.py",
            {},
            "scenarios/main.yaml:6: checks[0].file: no such file 'graders/missing.py' "
            "(looked for scenarios/graders/missing.py)",
        ),
        ("../../outside.py", {}, "'../../outside.py' is outside the benchmark directory"),
        (
            "graders/bad.py",
            {"scenarios/graders/bad.py": "def grade(a, c)\n    return True\n"},
            "checks[0].file: 'graders/bad.py' line 1 does not parse: expected ':'",
        ),
        (
            "graders/other.py",
            {"scenarios/graders/other.py": "def check(a, c):\n    return True\n"},
            "checks[0].file: 'graders/other.py' defines no 'grade' (top-level names: check)",
        ),
        ("graders", {"scenarios/graders/x.txt": ""}, "'graders' is not a .py file"),
    ],
)
def test_grader_files_are_validated_at_load_time(
    tmp_path: Path, file: str, files: dict[str, str], problem: str
) -> None:
    assert problem in _invalid(tmp_path, {"type": "python", "file": file}, files)


def test_a_valid_grader_loads(tmp_path: Path) -> None:
    scenario = {
        "id": "s1",
        "stimulus": "q",
        "checks": [{"type": "python", "file": "graders/g.py", "function": "check_it"}],
    }
    files = {"scenarios/graders/g.py": "from json import loads as check_it\n"}
    assert load_benchmark(write_benchmark(tmp_path / "b", [scenario], files=files)).scenarios


def test_parameters_are_checked_at_load_time() -> None:
    assert "String should match pattern" in params_error("python", file="g.py", function="a-b")
    assert "must be a path relative to the scenario file" in params_error("python", file="/g.py")
    assert "config must hold JSON values only" in params_error(
        "python", file="g.py", config={"when": object()}
    )
    assert "Extra inputs are not permitted" in params_error("python", file="g.py", value="x")
