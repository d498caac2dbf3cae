"""MBPP's program (the paper's: test_imports + code + every assert, run as one program, passing when
no assert fails), run through code_exec's two processes: a correct solution whose functions return
values of the standard library or numpy passes, as it does when the program runs as one; the
values cross the pipe by value (code_exec_wire.py), never as the solution's objects."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchyard.checks.code_exec import DRIVER_MODULES
from benchyard.checks.code_support import MODULE_ENV, script
from benchyard.formats.mbpp.check import MbppParams, program_of
from tests.unit.checks.code_helpers import evaluate, workspace

# type -> (a correct solution, test_imports, test_list)
CORRECT: dict[str, tuple[str, list[str], list[str]]] = {
    "fraction": (
        "from fractions import Fraction\ndef ratio(a, b):\n    return Fraction(a, b)\n",
        ["from fractions import Fraction"],
        ["assert ratio(1, 3) == Fraction(1, 3)", "assert ratio(2, 4).denominator == 2"],
    ),
    "decimal": (
        "from decimal import Decimal\ndef money(text):\n    return Decimal(text)\n",
        ["from decimal import Decimal"],
        ["assert money('1.10') + money('2.20') == Decimal('3.30')"],
    ),
    "complex": (
        "import cmath\ndef root(x):\n    return cmath.sqrt(x)\n",
        [],
        ["assert root(-4) == 2j"],
    ),
    "namedtuple": (
        "from collections import namedtuple\nSpan = namedtuple('Span', 'low high')\n"
        "def span(xs):\n    return Span(min(xs), max(xs))\n",
        [],
        ["assert span([3, 1]) == (1, 3)", "assert span([3, 1]).low == 1"],
    ),
    "counter": (
        "from collections import Counter\ndef letters(text):\n    return Counter(text)\n",
        [],
        ["assert letters('aab') == {'a': 2, 'b': 1}", "assert letters('aab')['z'] == 0"],
    ),
    "ordereddict": (
        "from collections import OrderedDict\ndef ordered(pairs):\n    return OrderedDict(pairs)\n",
        ["from collections import OrderedDict"],
        [
            "assert ordered([('b', 1), ('a', 2)]) == OrderedDict([('b', 1), ('a', 2)])",
            "assert ordered([('b', 1), ('a', 2)]) != OrderedDict([('a', 2), ('b', 1)])",
        ],
    ),
    "defaultdict": (
        "from collections import defaultdict\ndef groups(xs):\n    found = defaultdict(list)\n"
        "    for x in xs:\n        found[x % 2].append(x)\n    return found\n",
        [],
        ["assert groups([1, 2, 3])[1] == [1, 3]", "assert groups([1])[0] == []"],
    ),
    "set": ("def uniq(xs):\n    return set(xs)\n", [], ["assert uniq([1, 1, 2]) == {1, 2}"]),
    "frozenset": (
        "def frozen(xs):\n    return frozenset(xs)\n",
        [],
        ["assert frozen([1]) == frozenset({1})"],
    ),
    "bytes": ("def enc(text):\n    return text.encode()\n", [], ["assert enc('a') == b'a'"]),
}


NUMPY: dict[str, tuple[str, list[str], list[str]]] = {
    "numpy scalar": (
        "import numpy as np\ndef total(xs):\n    return np.sum(np.array(xs))\n",
        [],
        ["assert total([1, 2, 3]) == 6", "assert total([1, 2]) + 1 == 4"],
    ),
    "numpy array": (
        "import numpy as np\ndef double(xs):\n    return np.array(xs) * 2\n",
        ["import numpy as np"],
        [
            "assert (double([1, 2]) == np.array([2, 4])).all()",
            "assert double([[1]]).shape == (1, 1)",
        ],
    ),
}
"""Run with the interpreter running these tests, which has numpy (the sandboxes' has none)."""


@pytest.mark.parametrize("kind", sorted(CORRECT))
async def test_mbpp_official_v1_a_correct_solution_returning_it_passes(
    tmp_path: Path, kind: str
) -> None:
    solution, imports, tests = CORRECT[kind]
    async with workspace(tmp_path) as code:
        result = await evaluate("mbpp", code, solution, tests=tests, imports=imports)
    assert result.passed, result.reason


MBPP_792 = [
    "assert count_list([[1, 3], [5, 7], [9, 11], [13, 15, 17]]) == 4",
    "assert count_list([[1,2],[2,3],[4,5]]) == 3",
    "assert count_list([[1,0],[2,0]]) == 2",
]
"""task_id 792's test_list, verbatim from google-research's mbpp/sanitized-mbpp.json (commit
30adf0ec); its test_imports are empty."""


@pytest.mark.parametrize(
    "returned",
    ["Fraction(len(input_list))", "Decimal(len(input_list))", "complex(len(input_list))"],
)
async def test_mbpp_sanitized_30adf0ec_task_792_returning_a_numeric_type_passes(
    tmp_path: Path, returned: str
) -> None:
    # The paper's program (imports + code + every assert, one process) passes these: 4 == 4.
    # Was: "returned a non-plain object (Fraction), which the tests compare by identity".
    solution = (
        "from fractions import Fraction\nfrom decimal import Decimal\n"
        f"def count_list(input_list): \n    return {returned}\n"
    )
    async with workspace(tmp_path) as code:
        result = await evaluate("mbpp", code, solution, tests=MBPP_792, imports=[])
    assert result.passed, result.reason


async def test_mbpp_official_v1_a_fraction_that_equals_everything_still_fails(
    tmp_path: Path,
) -> None:
    liar = (
        "from fractions import Fraction\nclass Always(Fraction):\n"
        "    def __eq__(self, other):\n        return True\n    __hash__ = Fraction.__hash__\n"
        "def ratio(a, b):\n    return Always(0)\n"
    )
    tests = ["assert ratio(1, 3) == Fraction(1, 3)"]
    async with workspace(tmp_path) as code:
        result = await evaluate(
            "mbpp", code, liar, tests=tests, imports=["from fractions import Fraction"]
        )
    assert not result.passed
    assert "assert ratio(1, 3) == Fraction(1, 3): AssertionError" in result.reason


@pytest.mark.parametrize("kind", sorted(NUMPY))
def test_mbpp_official_v1_a_correct_solution_returning_numpy_values_passes(
    tmp_path: Path, kind: str
) -> None:
    # the driver and its two processes as the sandbox runs them (python3 -I -c), here with the
    # interpreter of these tests, which has numpy
    solution, imports, tests = NUMPY[kind]
    program = program_of(MbppParams(tests=tests, imports=imports), solution)
    (tmp_path / "solution.py").write_text(program.solution, encoding="utf-8")
    (tmp_path / "tests.py").write_text(program.tests, encoding="utf-8")
    (tmp_path / "marker").write_text("benchyard-marker-numpy", encoding="utf-8")
    modules = {MODULE_ENV + name: script(name) for name in DRIVER_MODULES}
    arguments = ["marker", "solution", "tests.py", "process"]
    done = subprocess.run(
        [sys.executable, "-I", "-c", script("code_exec_driver"), *arguments],
        cwd=tmp_path,
        env={**os.environ, **modules},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "benchyard-marker-numpy" in done.stdout
