"""`diff_quality`: the patch applies, its size, the paths it touches, the tests left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchyard.checks.code_support import glob_regex

from .code_helpers import evaluate, workspace
from .helpers import params_error

REPO = {
    "app/core.py": "def f():\n    return 1\n",
    "tests/test_core.py": "assert True\n",
    "logo.png": "",
}


async def test_a_small_change_to_allowed_paths_passes(tmp_path: Path) -> None:
    change = {"app/core.py": "def f():\n    return 2\n", "app/new.py": "X = 1\n"}
    async with workspace(tmp_path, REPO, change) as code:
        result = await evaluate(
            "diff_quality", code, allowed_paths=["app/**"], max_files=2, max_lines=3
        )
    assert result.passed
    assert result.reason == (
        "patch applies, 2 file(s), 3 line(s) changed; paths allowed, tests untouched"
    )


async def test_touching_the_tests_fails_by_default(tmp_path: Path) -> None:
    change = {"tests/test_core.py": None, "app/conftest.py": "import pytest\n"}
    async with workspace(tmp_path, REPO, change) as code:
        result = await evaluate("diff_quality", code)
    assert not result.passed and result.score == pytest.approx(2 / 3)
    assert result.reason == (
        "patch applies, 2 file(s), 2 line(s) changed; touches protected paths: "
        "app/conftest.py (added), tests/test_core.py (deleted)"
    )


async def test_size_limits_and_paths_outside_the_allowed_ones(tmp_path: Path) -> None:
    change = {
        "app/core.py": "def f():\n    return 3\n\n\ndef g():\n    return 4\n",
        "logo.png": b"\x89PNG\x00\x01",
        "README": "new\n",
    }
    async with workspace(tmp_path, REPO, change) as code:
        result = await evaluate(
            "diff_quality", code, allowed_paths=["app/*.py"], max_files=1, max_lines=4
        )
    assert not result.passed and result.score == pytest.approx(2 / 5)
    assert result.reason == (
        "patch applies, 3 file(s), 7 line(s) changed; outside the allowed paths: README (added), "
        "logo.png (modified); 3 files changed, at most 1 allowed; "
        "7 lines changed, at most 4 allowed"
    )


async def test_an_empty_patch(tmp_path: Path) -> None:
    async with workspace(tmp_path, REPO) as code:
        required = await evaluate("diff_quality", code)
        optional = await evaluate("diff_quality", code, require_change=False)
    assert not required.passed and required.reason.endswith("the agent changed nothing")
    assert optional.passed


async def test_a_patch_that_was_refused(tmp_path: Path) -> None:
    async with workspace(tmp_path, REPO, {"app/core.py": "x = 1\n"}) as code:
        code.patch_error = "the patch is 5000000 bytes, over 4194304"
        result = await evaluate("diff_quality", code)
    assert not result.passed
    assert result.reason == "patch not applied: the patch is 5000000 bytes, over 4194304"


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/test_*.py", "test_a.py", True),
        ("**/test_*.py", "pkg/tests/test_a.py", True),
        ("**/test_*.py", "pkg/test_dir/a.py", False),
        ("tests/**", "tests/unit/x.py", True),
        ("tests/**", "src/tests.py", False),
        ("*.py", "a.py", True),
        ("*.py", "pkg/a.py", False),
        ("src/?.py", "src/a.py", True),
        ("a+b.py", "a+b.py", True),
    ],
)
def test_globs(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is matches


def test_params_are_validated_at_load() -> None:
    assert "greater than or equal to 0" in params_error("diff_quality", max_lines=-1)
    assert "Extra inputs are not permitted" in params_error("diff_quality", allowed=["x"])
