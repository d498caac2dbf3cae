"""`code_exec`: model-written code against test asserts, in a real sandbox, with a marker; the tests
in a process apart from the solution's, calling it across a pipe of plain data."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from benchyard.checks.base import CheckFailedToRun
from benchyard.checks.code_support import RUN_PACKED, SCRIPT_ENV, answer_code, pack, script
from benchyard.runner.two_phase import reads_change

from .code_helpers import coding_attempt, coding_scenario, evaluate, workspace
from .helpers import params_error

ADD = "```python\ndef add(a, b):\n    return a + b\n```"
TESTS = "assert add(2, 3) == 5\nassert add(-1, 1) == 0\n"


async def test_passes_when_every_assert_holds(tmp_path: Path) -> None:
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, ADD, tests=TESTS)
    assert result.passed and result.score == 1.0
    assert result.reason == (
        "the tests passed (marker printed after the last assert) (tests in a separate process)"
    )


async def test_a_failing_assert_names_the_line_of_the_tests(tmp_path: Path) -> None:
    wrong = "```python\ndef add(a, b):\n    return a - b\n```"
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, wrong, tests=TESTS)
    assert not result.passed
    assert result.reason == (
        "a test failed: tests line 1: assert add(2, 3) == 5: AssertionError "
        "(tests in a separate process)"
    )


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
    assert result.reason.startswith(
        ("the solution could not be imported: SystemExit", "the solution's process ended (exit 0)")
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
    assert result.reason == "timed out after 1s (tests in a separate process)"


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
    assert result.reason == (
        "the solution could not be imported: ValueError: bad\\x00byte (tests in a separate process)"
    )


# the tests in a process apart from the solution's

SOLUTION = """
import math
from collections import OrderedDict, defaultdict


class BadInput(ValueError):
    pass


class Unknown(Exception):
    pass


class Stack:
    def __init__(self, *items):
        self.items = list(items)

    def push(self, item):
        self.items.append(item)

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return f"Stack{self.items}"


def has_close_elements(numbers, threshold):
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])


def mean(xs):
    return sum(xs) / len(xs)


def parse(text):
    if text == "bad":
        raise BadInput("not a number: bad")
    if text == "?":
        raise Unknown("what?")
    return int(text)


def squares(n):
    for i in range(n):
        yield i * i


def apply(function, value):
    return function(value)


def sort_in_place(items):
    items.sort()


def counts(text):
    found = defaultdict(int)
    for char in text:
        found[char] += 1
    return found


def shapes():
    return (1, [2, (3,)]), {1, frozenset({2})}, {(1, 2): "pair", 3: None}, b"\\x00\\xff"


def extremes():
    return [2 ** 200, -(2 ** 70), float("nan"), float("inf"), -0.0, 1 + 2j]


def is_even(n):
    return n % 2 == 0
"""


TYPICAL_TESTS = """
def check(candidate):
    assert candidate([1.0, 2.0, 3.9], 0.3) is False
    assert candidate([1.0, 2.8, 3.0], 0.3) is True
check(has_close_elements)
assert math.isclose(mean([1, 2, 3, 4]), 2.5)
assert abs(mean([0.1, 0.2]) - 0.15) < 1e-9
assert is_even(4) is True and is_even(3) is False and not is_even(5)
assert shapes() == ((1, [2, (3,)]), {1, frozenset({2})}, {(1, 2): "pair", 3: None}, b"\\x00\\xff")
assert shapes()[0] != [1, [2, [3]]], "a tuple is not a list"
big, small, nan, inf, zero, z = extremes()
assert big == 2 ** 200 and small == -(2 ** 70) and math.isnan(nan) and inf == math.inf
assert math.copysign(1, zero) == -1 and z == 1 + 2j
assert counts("abca") == {"a": 2, "b": 1, "c": 1}
assert list(squares(4)) == [0, 1, 4, 9] and sum(squares(3)) == 5 and 4 in squares(5)
assert apply(lambda x: x * 2, 21) == 42 and apply(len, "abc") == 3
assert apply(lambda x: mean([x, x + 2]), 1) == 2, "a callback that calls the solution"
items = [3, 1, 2]
sort_in_place(items)
assert items == [1, 2, 3], "changed in place"
for bad, kind in (("bad", ValueError), ("bad", BadInput), ("x", ValueError), ("?", Unknown)):
    try:
        parse(bad)
    except kind as error:
        assert str(error), error
    else:
        raise AssertionError(f"no {kind.__name__} for {bad!r}")
stack = Stack(1)
stack.push(2)
assert len(stack) == 2 and stack.items == [1, 2] and repr(stack) == "Stack[1, 2]"
assert str(stack) == "Stack[1, 2]" and stack.items[-1] == 2
import solution
from solution import mean as average
assert solution.parse("7") == 7 and average([2, 4]) == 3
assert isinstance(OrderedDict(), dict), "the solution's stdlib imports are the tests' too"
"""


async def test_typical_test_styles_pass_across_the_process_boundary(tmp_path: Path) -> None:
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, SOLUTION, tests=TYPICAL_TESTS)
    assert result.passed, result.reason


async def test_an_input_the_solution_changes_in_place_is_seen_by_the_tests(tmp_path: Path) -> None:
    changes_its_input = "def first_sorted(items):\n    items.sort()\n    return items[0]\n"
    tests = "data = [3, 1]\nassert first_sorted(data) == 1\nassert data == [3, 1], 'modified'\n"
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, changes_its_input, tests=tests)
    assert not result.passed
    assert result.reason.startswith("a test failed: tests line 3: assert data == [3, 1]")


async def test_a_function_named_like_the_module_keeps_its_name(tmp_path: Path) -> None:
    answer = "def solution(x):\n    return x + 1\n"
    tests = "assert solution(1) == 2\nfrom solution import solution as s\nassert s(2) == 3\n"
    async with workspace(tmp_path) as code:
        apart = await evaluate("code_exec", code, answer, tests=tests)
    async with workspace(tmp_path / "same") as code:
        same = await evaluate(
            "code_exec", code, answer, tests="assert solution(1) == 2\n", same_process=True
        )
    assert apart.passed, apart.reason
    assert same.passed, same.reason
    assert same.reason.endswith(
        "(tests in the solution's process: its code could have forged this)"
    )


async def test_a_value_that_cannot_cross_fails_the_test_that_sent_it(tmp_path: Path) -> None:
    tests = "class Point:\n    pass\n\nidentity(Point())\n"
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, "def identity(x):\n    return x\n", tests=tests)
    assert not result.passed
    assert "tests line 4: identity(Point()): TypeError: a Point cannot be passed" in result.reason


async def test_the_solution_ending_during_the_tests_fails_even_if_the_tests_catch_it(
    tmp_path: Path,
) -> None:
    answer = "import os\n\ndef parse(text):\n    os._exit(0)\n"
    tests = "for text in ('', 'x'):\n    try:\n        parse(text)\n    except Exception:\n        pass\n"
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, answer, tests=tests)
    assert not result.passed
    assert result.reason.startswith(
        "the solution's process ended (exit 0) while the tests ran: tests line 3: parse(text)"
    )


async def test_the_tests_are_gone_before_the_solution_starts(tmp_path: Path) -> None:
    snoop = (
        "import glob, os\n"
        "left = [p for p in glob.glob(os.getcwd() + '/**/*', recursive=True) if 'hidden' in p]\n"
        "raise RuntimeError(f'found {left}')\n"
    )
    hidden = {"checks/hidden_expected.py": "assert answer() == 42\n"}
    async with workspace(tmp_path, hidden=hidden) as code:
        result = await evaluate("code_exec", code, snoop, tests_file="checks/hidden_expected.py")
    assert result.reason.startswith("the solution could not be imported: RuntimeError: found []")


async def test_an_answer_only_scenario_takes_no_snapshot_and_keeps_no_patch(
    tmp_path: Path,
) -> None:
    """code_exec grades the answer alone: no git snapshot, no patch, and the workspace holds the
    pristine fixtures without what the agent wrote into its workdir."""
    scenario = coding_scenario(checks=[{"type": "code_exec", "tests": TESTS}])
    assert not reads_change(scenario)
    async with coding_attempt(
        tmp_path, {"helper.py": "pristine\n"}, {"helper.py": "changed\n"}, scenario=scenario
    ) as attempt:
        assert attempt.snapshot is None and attempt.stored_patch() is None
        async with attempt.open_workspace() as code:
            assert (code.workdir / "helper.py").read_text() == "pristine\n"
            result = await evaluate("code_exec", code, ADD, tests=TESTS)
    assert result.passed, result.reason
    assert not (tmp_path / "scratch" / "verify" / "a1" / "git").exists()
    assert reads_change(coding_scenario())  # diff_quality reads the change


@pytest.mark.parametrize(
    ("magic", "ran"),
    [(importlib.util.MAGIC_NUMBER, "bytecode"), (b"\x00\x00\r\n", "source")],
)
def test_a_packed_script_runs_its_bytecode_only_under_its_own_magic_number(
    magic: bytes, ran: str
) -> None:
    """The bytecode is loaded by an interpreter with the magic number it was compiled for; any
    other compiles the source that follows it (here they differ, to tell which ran)."""
    script = "import os, sys\nprint('{}', sys.argv[1:], [n for n in os.environ if 'BENCH' in n])\n"
    bytecode = pack(script.format("bytecode"), "s.py", magic)
    source = pack(script.format("source"), "s.py", magic).split(" ")[3]
    packed_text = " ".join([*bytecode.split(" ")[:3], source])
    done = subprocess.run(
        [sys.executable, "-I", "-c", RUN_PACKED, "a", "b"],
        env={SCRIPT_ENV: packed_text, "BENCH_OTHER": "kept"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == f"{ran} ['a', 'b'] ['BENCH_OTHER']\n"  # its own variable gone


def test_a_python3_without_zlib_says_it_cannot_run_a_packed_script() -> None:
    """A packed script is compressed: a python3 without zlib says so as the bundled scripts say
    what the sandbox lacks (an uncounted error), rather than failing like the agent's code."""
    without_zlib = "import sys\nsys.modules['zlib'] = None\n" + RUN_PACKED
    done = subprocess.run(
        [sys.executable, "-I", "-c", without_zlib],
        env={SCRIPT_ENV: pack("print('ran')\n", "s.py")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout.startswith("benchyard: cannot run: ModuleNotFoundError: import of zlib")


def test_without_its_variable_a_bundled_script_says_it_cannot_run() -> None:
    """A sandbox that did not pass the command's environment on: an uncounted error, not a
    failure of the agent's code."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", RUN_PACKED], env={}, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert done.stdout == "benchyard: cannot run: KeyError: 'BENCHYARD_SCRIPT'\n"


async def test_a_grading_imports_none_of_the_modules_that_compile_regexes(
    tmp_path: Path,
) -> None:
    """The tests process (where the asserts run) has imported none of the modules that cost a
    sandboxed grading its CPU: `re` (json, base64, fractions, typing), `enum` (signal), `decimal`;
    a Fraction still crosses, by importing `fractions` when one arrives. Nor `ctypes` (prctl goes
    through `_ctypes`), `collections`, `functools`, `contextlib`, `importlib`, `struct`, `types`."""
    heavy = ("re", "enum", "typing", "json", "base64", "fractions", "decimal", "signal", "ctypes")
    heavy += ("collections", "functools", "contextlib", "importlib", "struct", "types")
    answer = "```python\ndef half(n):\n    from fractions import Fraction\n    return Fraction(n, 2)\n```"
    tests = (
        f"import sys\nloaded = [name for name in {heavy!r} if name in sys.modules]\n"
        "assert loaded == [], loaded\n"
        "assert half(3) == 1.5 and type(half(3)).__name__ == 'Fraction'\n"
    )
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, answer, tests=tests)
    assert result.passed, result.reason


async def test_the_bundled_scripts_leave_neither_process_an_environment_to_pass_on(
    tmp_path: Path,
) -> None:
    """The driver and the modules it loads travel in the environment (code_support.run_script);
    they are taken out of it before anything of the model's runs, in the tests' process as in the
    solution's, so nothing either starts inherits them."""
    answer = "import os\nLEFT = [n for n in os.environ if n.startswith('BENCHYARD_')]\n"
    tests = (
        "import os\nassert LEFT == [], LEFT\n"
        "assert [n for n in os.environ if n.startswith('BENCHYARD_')] == []\n"
    )
    async with workspace(tmp_path) as code:
        result = await evaluate("code_exec", code, answer, tests=tests)
    assert result.passed, result.reason


@pytest.mark.parametrize(("removed", "through"), [("", "_ctypes"), ("call_function", "ctypes")])
def test_the_driver_makes_itself_non_dumpable(removed: str, through: str) -> None:
    """forbid_dumps calls prctl through `_ctypes` (ctypes's C module, no `ctypes` imported), or
    through `ctypes` where `_ctypes` lacks what it needs; the process is non-dumpable either way."""
    program = (
        "import _ctypes, sys\n"
        f"if {removed!r}:\n    delattr(_ctypes, {removed!r})\n"
        "driver = {'__name__': 'driver'}\n"
        "exec(sys.argv[1], driver)\n"
        "import ctypes\n"
        "prctl = ctypes.CDLL(None).prctl\n"
        "before = prctl(3, 0, 0, 0, 0)\n"  # PR_GET_DUMPABLE
        "del sys.modules['ctypes']\n"
        "driver['forbid_dumps']()\n"
        "print(before, prctl(3, 0, 0, 0, 0), 'ctypes' if 'ctypes' in sys.modules else '_ctypes')\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", program, script("code_exec_driver")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == f"1 0 {through}\n"
