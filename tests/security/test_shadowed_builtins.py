"""A solution's module-level names never shadow the builtins the tests call: a wrong solution that
defines its own `abs` (or `len`, `sorted`, `isinstance`, ...) used to pass, because its names were
installed as globals of the tests' namespace, so the asserts called the solution's versions.

One case per builtin the tests of HumanEval and MBPP use (read once from shared/datasets: str,
range, abs, tuple, print, len, list, sum in HumanEval's; set, sum and `math.isclose` in MBPP's;
`math.fabs` in HumanEval/32's), and the other builtins a forged pass would reach for. Each
solution is wrong (`inc` returns the wrong value) and defines the builtin so that the assert would
hold with its version. Run in bwrap, the sandbox the code checks default to."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchyard.checks.base import CheckResult, Evidence
from tests.unit.checks.code_helpers import code_sandbox, coding_scenario, evaluate, workspace
from tests.unit.checks.helpers import check_type

APART = "(tests in a separate process)"

# builtin -> (the solution's forged version, an assert that holds only with it)
FORGED: dict[str, tuple[str, str]] = {
    "abs": ("def abs(x):\n    return 0\n", "assert abs(inc(1) - 2) < 1e-6"),
    "len": ("def len(x):\n    return 3\n", "assert len(inc(1)) == 3"),
    "sorted": ("def sorted(x, **k):\n    return [1, 2]\n", "assert sorted(inc(1)) == [1, 2]"),
    "isinstance": ("def isinstance(x, t):\n    return True\n", "assert isinstance(inc(1), str)"),
    "set": ("def set(x=()):\n    return {2}\n", "assert set([inc(1)]) == {2}"),
    "round": ("def round(x, n=0):\n    return 2.0\n", "assert round(inc(1), 2) == 2.0"),
    "all": ("def all(x):\n    return True\n", "assert all([inc(1) == 2])"),
    "any": ("def any(x):\n    return True\n", "assert any([inc(1) == 2])"),
    "list": ("def list(x=()):\n    return [2]\n", "assert list([inc(1)]) == [2]"),
    "str": ("def str(x=''):\n    return '2'\n", "assert str(inc(1)) == '2'"),
    "int": ("def int(x=0):\n    return 2\n", "assert int(inc(1)) == 2"),
    "float": ("def float(x=0):\n    return 2.0\n", "assert float(inc(1)) == 2.0"),
    "tuple": ("def tuple(x=()):\n    return (2,)\n", "assert tuple([inc(1)]) == (2,)"),
    "range": ("def range(*a):\n    return [2]\n", "assert [*range(inc(1))] == [2]"),
    "sum": ("def sum(x, s=0):\n    return 2\n", "assert sum([inc(1)]) == 2"),
    "print": ("def print(*a):\n    return 2\n", "assert print(inc(1)) == 2"),
    "math.isclose": (
        "import types\nmath = types.SimpleNamespace(isclose=lambda *a, **k: True)\n",
        "import math\nassert math.isclose(inc(1), 2)",
    ),
    "math.fabs": (
        "import math\nmath.fabs = lambda x: 0.0\n",
        "def check(candidate):\n    import math\n    assert math.fabs(candidate(1) - 2) < 1e-6\n"
        "check(inc)",
    ),
}


async def _code_exec(tmp_path: Path, answer: str, tests: str) -> CheckResult:
    async with workspace(tmp_path, sandbox=code_sandbox("bwrap")) as code:
        return await evaluate("code_exec", code, answer, tests=tests)


@pytest.mark.parametrize("builtin", sorted(FORGED))
async def test_a_solutions_own_builtin_is_not_what_the_tests_call(
    tmp_path: Path, builtin: str
) -> None:
    forged, tests = FORGED[builtin]
    answer = f"{forged}\ndef inc(x):\n    return x\n"  # wrong: inc(1) is 1, not 2
    result = await _code_exec(tmp_path, answer, tests + "\n")
    assert not result.passed, result.reason
    assert result.reason.startswith("a test failed: tests line"), result.reason
    assert result.reason.endswith(APART)


async def test_the_solution_still_reaches_its_own_names_and_the_module(tmp_path: Path) -> None:
    answer = "def abs(x):\n    return 'mine'\n\ndef inc(x):\n    return x + 1\n"
    tests = "import solution\nassert inc(1) == 2\nassert solution.abs(1) == 'mine'\n"
    tests += "assert abs(-2) == 2\n"
    result = await _code_exec(tmp_path, answer, tests)
    assert result.passed, result.reason


async def test_humaneval_official_v1_sees_the_entry_point_and_the_prompts_helpers_only(
    tmp_path: Path,
) -> None:
    # HumanEval's test calls the prompt's helper (as HumanEval/38's calls encode_cyclic); a
    # completion's own `abs` stays the solution's
    prompt = 'def helper(x):\n    return x * 10\n\ndef inc(x):\n    """Add one."""\n'
    test = "def check(candidate):\n    assert abs(candidate(1) - helper(0) - 2) < 1e-6\n"
    async with workspace(tmp_path, sandbox=code_sandbox("bwrap")) as code:
        right = await evaluate(
            "humaneval", code, "    return x + 1\n", prompt=prompt, test=test, entry_point="inc"
        )
    assert right.passed, right.reason
    wrong_answer = "    return x\n\ndef abs(x):\n    return 0\n"
    async with workspace(tmp_path / "wrong", sandbox=code_sandbox("bwrap")) as code:
        wrong = await evaluate(
            "humaneval", code, wrong_answer, prompt=prompt, test=test, entry_point="inc"
        )
    assert not wrong.passed, wrong.reason


async def _mbpp(tmp_path: Path, answer: str, reference: str, tests: list[str]) -> CheckResult:
    """MBPP's check as an imported task grades it: the task's code is the scenario's reference."""
    kind = check_type("mbpp")
    params = kind.params.model_validate({"tests": tests})
    async with workspace(tmp_path, sandbox=code_sandbox("bwrap")) as code:
        evidence = Evidence(answer=answer, scenario=coding_scenario(reference=reference), code=code)
        result = await kind.evaluate(params, evidence)
    assert isinstance(result, CheckResult)
    return result


async def test_mbpp_official_v1_an_entry_point_named_like_a_builtin_is_the_solutions(
    tmp_path: Path,
) -> None:
    # sanitized MBPP task 126 names its function `sum`: its asserts call the solution's (one
    # program, officially), which its reference code declares
    reference = (  # the task's code, as the dataset gives it
        "def sum(a,b): \n    sum = 0\n    for i in range (1,min(a,b)): \n"
        "        if (a % i == 0 and b % i == 0): \n            sum += i \n    return sum"
    )
    tests = ["assert sum(10,15) == 6", "assert sum(100,150) == 93", "assert sum(4,6) == 3"]
    result = await _mbpp(tmp_path, reference, reference, tests)
    assert result.passed, result.reason


async def test_mbpp_official_v1_a_builtin_the_reference_does_not_define_stays_pythons(
    tmp_path: Path,
) -> None:
    reference = "def inc(x):\n    return x + 1\n"
    wrong = "def abs(x):\n    return 0\n\ndef inc(x):\n    return x\n"
    result = await _mbpp(tmp_path, wrong, reference, ["assert abs(inc(1) - 2) < 1e-6"])
    assert not result.passed, result.reason
