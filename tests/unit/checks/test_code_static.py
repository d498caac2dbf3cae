"""`static`: syntax, lint rules and forbidden patterns over files or the answer, in a sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from .code_helpers import evaluate, workspace
from .helpers import params_error

CLEAN = {"pkg/mod.py": "import os\n\n\ndef cwd():\n    return os.getcwd()\n", "data.json": "{}"}


async def test_clean_files_pass(tmp_path: Path) -> None:
    async with workspace(tmp_path, CLEAN) as code:
        result = await evaluate(
            "static", code, files=["**/*.py", "*.json"], lint=["unused-import", "bare-except"]
        )
    assert result.passed
    assert result.reason == "2 file(s) clean"


async def test_syntax_errors_in_python_and_json_name_file_and_line(tmp_path: Path) -> None:
    broken = {"pkg/mod.py": "def f(:\n    pass\n", "data.json": '{"a": 1,\n}'}
    async with workspace(tmp_path, CLEAN, broken) as code:
        result = await evaluate("static", code, files=["**/*.py", "**/*.json"])
    assert not result.passed
    assert result.reason.startswith("2 problem(s): data.json:2: syntax: ")
    assert "pkg/mod.py:1: syntax: " in result.reason


async def test_files_that_crash_a_parser_are_findings_not_a_check_that_cannot_run(
    tmp_path: Path,
) -> None:
    """A NUL byte, or nesting deeper than the parser's recursion: the agent's own files, so a
    failure it earned, never an uncounted error."""
    hostile = {
        "nul.py": "x = 1\x00\n",
        "deep.py": "x = 1" + " + 1" * 100_000 + "\n",
        "deep.json": "[" * 100_000 + "]" * 100_000,
    }
    async with workspace(tmp_path, CLEAN, hostile) as code:
        result = await evaluate("static", code, files=["**/*.py", "**/*.json"])
    assert not result.passed
    assert result.reason.startswith("3 problem(s): deep.json:0: syntax: cannot be parsed: ")
    assert "deep.py:0: syntax: cannot be parsed: RecursionError" in result.reason
    assert "nul.py:" in result.reason  # ValueError in 3.11, a SyntaxError in later versions


@pytest.mark.parametrize(
    ("rule", "source", "message"),
    [
        (
            "unused-import",
            "import json\nimport os\nprint(os.sep)\n",
            "m.py:1: unused-import: 'json'",
        ),
        (
            "bare-except",
            "try:\n    pass\nexcept:\n    pass\n",
            "m.py:3: bare-except: bare 'except:'",
        ),
        ("star-import", "from os import *\n", "m.py:1: star-import: 'import *'"),
        ("mutable-default", "def f(a, b=[]):\n    return b\n", "m.py:1: mutable-default: "),
    ],
)
async def test_lint_rules(tmp_path: Path, rule: str, source: str, message: str) -> None:
    async with workspace(tmp_path, {"m.py": source}) as code:
        flagged = await evaluate("static", code, lint=[rule])
        unflagged = await evaluate("static", code, lint=[])
    assert not flagged.passed
    assert message in flagged.reason
    assert unflagged.passed


async def test_forbidden_patterns_and_only_the_changed_files(tmp_path: Path) -> None:
    pristine = {"old.py": "import subprocess\n", "new.py": "x = 1\n"}
    change = {"new.py": "import subprocess\nsubprocess.run(['ls'])\n", "gone.py": None}
    async with workspace(tmp_path, {**pristine, "gone.py": "import subprocess\n"}, change) as code:
        everywhere = await evaluate("static", code, forbidden=[r"\bsubprocess\b"])
        changed = await evaluate("static", code, forbidden=[r"\bsubprocess\b"], only_changed=True)
    assert everywhere.reason.startswith("2 problem(s): new.py:1: forbidden: ")
    assert (
        changed.reason
        == r"1 problem(s): new.py:1: forbidden: matches forbidden pattern /\bsubprocess\b/"
    )


async def test_the_answers_code(tmp_path: Path) -> None:
    answer = "Here:\n```python\nimport os\nfrom sys import *\n```"
    async with workspace(tmp_path) as code:
        result = await evaluate(
            "static",
            code,
            answer,
            source="answer",
            forbidden=["^\\s*import "],
            lint=["star-import"],
        )
    assert not result.passed
    assert result.reason.startswith("2 problem(s): solution.py:1: forbidden: ")


async def test_a_lint_command_must_exit_0(tmp_path: Path) -> None:
    async with workspace(tmp_path, {"m.py": "x = 1\n"}) as code:
        ok = await evaluate("static", code, command="grep -q 'x = 1' m.py")
        bad = await evaluate("static", code, command="echo 'm.py:1: E999 nope'; exit 1")
        missing = await evaluate("static", code, command="no-such-linter .")
    assert ok.passed
    assert bad.reason == "1 problem(s): lint command exited 1: m.py:1: E999 nope"
    # the lint command runs in the patched workdir: its exit status is no proof of a missing tool
    assert not missing.passed
    assert missing.reason.startswith("1 problem(s): lint command exited 127 (command not found?): ")


async def test_no_matching_file_fails(tmp_path: Path) -> None:
    async with workspace(tmp_path, {"notes.txt": "hi"}) as code:
        result = await evaluate("static", code)
    assert not result.passed
    assert result.reason == "no file matches **/*.py"


def test_params_are_validated_at_load() -> None:
    assert "'(' is not a valid regular expression" in params_error("static", forbidden=["("])
    assert "Input should be 'unused-import'" in params_error("static", lint=["no-print"])
    assert "Input should be 'files' or 'answer'" in params_error("static", source="patch")
