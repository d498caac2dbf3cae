"""`code_exec`: model-written code against test asserts, in a real sandbox, with a marker."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchyard.checks.base import CheckFailedToRun
from benchyard.checks.code_support import answer_code

from .code_helpers import evaluate, workspace
from .helpers import params_error

ADD = "```python\ndef add(a, b):\n    return a + b\n```"
TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"


async def test_passes_when_every_assert_holds(tmp_path: Path) -> None:
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, ADD, tests=TESTS)
    assert result.passed and result.score == 1.0
    assert result.reason == "the tests passed (marker printed after the last assert)"


async def test_a_failing_assert_names_the_line_of_the_tests(tmp_path: Path) -> None:
    wrong = "```python\ndef add(a, b):\n    return a - b\n```"
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, wrong, tests=TESTS)
    assert not result.passed
    assert result.reason == "a test failed: tests line 1: assert add(2, 3) == 5: AssertionError"


@pytest.mark.parametrize(
    "escape",
    [
        "import sys\nsys.exit(0)",
        "import os\nos._exit(0)",
        "import atexit, os\natexit.register(lambda: os._exit(0))\nraise SystemExit(0)",
    ],
)
async def test_exiting_0_before_the_asserts_is_not_a_pass(tmp_path: Path, escape: str) -> None:
    answer = f"```python\ndef add(a, b):\n    return 0\n{escape}\n```"
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, answer, tests=TESTS)
    assert not result.passed
    assert (
        "could not be imported: SystemExit" in result.reason
        or "without printing the marker" in (result.reason)
    )


async def test_the_code_cannot_find_the_marker_in_files_or_arguments(tmp_path: Path) -> None:
    snoop = (
        "import glob, os, sys\n"
        "found = [open(p).read() for p in glob.glob(os.path.join(os.path.dirname(sys.argv[1]), '*'))]\n"
        "print(*found, *sys.argv)\n"
        "os._exit(0)\n"
    )
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, snoop, tests=TESTS)
    assert not result.passed, result.reason


async def test_code_that_does_not_parse_fails_with_its_error(tmp_path: Path) -> None:
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, "I don't know.", tests=TESTS)
    assert not result.passed
    assert result.reason.startswith("the solution could not be imported: SyntaxError")


async def test_a_hang_is_cut_at_the_timeout(tmp_path: Path) -> None:
    answer = "```python\nwhile True:\n    pass\n```"
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, answer, tests=TESTS, timeout_sec=1)
    assert not result.passed
    assert result.reason == "timed out after 1s"


async def test_tests_from_a_hidden_file_and_a_named_module(tmp_path: Path) -> None:
    hidden = {"checks/test_add.py": "from calc import add\nassert add(1, 1) == 2\n"}
    answer = "```py\ndef add(a, b):\n    return a + b\n```"
    async with workspace(tmp_path, hidden=hidden) as code:
        result = await evaluate(
            "code_exec", code, answer, tests_file="checks/test_add.py", module="calc"
        )
        assert result.passed, result.reason
        assert (code.workdir / "calc.py").read_text().startswith("def add")


async def test_the_solution_replaces_a_link_the_patch_left_without_following_it(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")

    def plant_link(workdir: Path) -> None:
        (workdir / "solution.py").symlink_to(outside)

    async with workspace(tmp_path, change=plant_link) as code:
        result = await evaluate("code_exec", code, ADD, tests=TESTS)
    assert result.passed, result.reason
    assert outside.read_text() == "keep me"


async def test_without_a_workspace_the_check_cannot_run() -> None:
    with pytest.raises(CheckFailedToRun, match="needs a verification workspace"):
        await evaluate("code_exec", None, ADD, tests=TESTS)


def test_answer_code_prefers_a_python_block_then_an_untagged_one_then_the_answer() -> None:
    assert answer_code("text\n```js\nx\n```\n```python\ny = 1\n```") == "y = 1\n"
    assert answer_code("```\nz = 2\n```") == "z = 2\n"
    assert answer_code("  w = 3  \n") == "w = 3\n"


def test_params_are_validated_at_load() -> None:
    assert "exactly one of 'tests' or 'tests_file'" in params_error("code_exec")
    assert "exactly one of 'tests' or 'tests_file'" in params_error(
        "code_exec", tests="assert 1", tests_file="t.py"
    )
    assert "tests line 2: '(' was never closed" in params_error(
        "code_exec", tests="x = 1\nassert ("
    )
    assert "should match pattern" in params_error("code_exec", tests="pass", module="my-mod")


async def test_nul_bytes_in_the_codes_output_never_reach_the_reason(tmp_path: Path) -> None:
    answer = "```python\nraise ValueError('bad\\x00byte')\n```"
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, answer, tests=TESTS)
    assert "\x00" not in result.reason
    assert result.reason == "the solution could not be imported: ValueError: bad\\x00byte"
