"""The bwrap sandbox runs `/bin/sh -c COMMAND` as COMMAND's words when the shell would do nothing
with them but run them, and keeps the shell for anything else."""

from __future__ import annotations

import pytest

from benchyard.sandbox.bwrap import without_shell


def shell(command: str) -> list[str]:
    return ["/bin/sh", "-c", command]


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("python3 agent.py --level=2", ["python3", "agent.py", "--level=2"]),
        (
            "/usr/bin/python3 -I -c \"import os; print(os.environ['X'][1:])\"",
            ["/usr/bin/python3", "-I", "-c", "import os; print(os.environ['X'][1:])"],
        ),
        ("python3 '$HOME; *'", ["python3", "$HOME; *"]),
        ("  ./agent\t--fast  ", ["./agent", "--fast"]),
    ],
)
def test_plain_words_run_without_a_shell(command: str, words: list[str]) -> None:
    assert without_shell(shell(command)) == words


@pytest.mark.parametrize(
    "command",
    [
        "python3 $HOME",
        'python3 "$HOME"',
        'python3 "`id`"',
        'python3 "a\\b"',
        "python3 a\\ b",
        "a; b",
        "a && b",
        "a | b",
        "a > out",
        "a < in",
        "a &",
        "python3 *.py",
        "python3 file?.py",
        "python3 [ab].py",
        "~/agent",
        "a {x,y}",
        "a # comment",
        "a\nb",
        "X=1 agent",
        "echo hi",
        "cd /tmp",
        "exec agent",
        "if true",
        "-x",
        '"" agent',
        "",
        "   ",
    ],
)
def test_anything_the_shell_would_act_on_keeps_the_shell(command: str) -> None:
    assert without_shell(shell(command)) == shell(command)


def test_other_commands_are_left_as_they_are() -> None:
    assert without_shell(["python3", "-c", "x"]) == ["python3", "-c", "x"]
    relayed = ["relay", "/bin/sh", "-c", "agent"]
    assert without_shell(relayed) == relayed
    assert without_shell(["/bin/sh", "-c", "agent", "name"]) == ["/bin/sh", "-c", "agent", "name"]
