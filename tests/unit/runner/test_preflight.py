"""The preflight of an agent's command: its program is looked for as the shell would find it, and
whatever only a shell can resolve is left to the shell."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchyard.runner.preflight import command_problem


@pytest.mark.parametrize(
    "command",
    [
        "python3 agent.py",
        "FOO=1 BAR='a b' python3 -c 'print(1)'",
        "sh -c 'pyhton3 x'",  # the program is sh; what it runs is the shell's to find
        "cd work && pyhton3 agent.py",
        "exec pyhton3",
        "$AGENT --flag",
        "~/bin/agent",
        "./agent.sh",  # relative: a fixture of the workdir, perhaps
        "(pyhton3)",
        "2>/dev/null pyhton3",
        "PATH=$PATH:/opt pyhton3",
        "python3 'unbalanced",
        "",
    ],
)
def test_what_can_run_or_cannot_be_told_passes(command: str) -> None:
    assert command_problem(command) is None


def test_a_program_not_on_the_agents_path_is_named() -> None:
    problem = command_problem("LANG=C pyhton3 agent.py")
    assert problem is not None
    assert problem.startswith("'pyhton3' is not found on the agent's PATH (/usr/local/sbin:")


def test_the_path_the_command_or_the_agent_sets_is_the_one_searched(tmp_path: Path) -> None:
    program = tmp_path / "my-agent"
    program.write_text("#!/bin/sh\necho hi\n")
    program.chmod(0o755)
    assert command_problem("my-agent") is not None  # not on the sandbox's system PATH
    assert command_problem(f"PATH={tmp_path} my-agent") is None
    assert command_problem("my-agent", {"PATH": str(tmp_path)}) is None
    program.chmod(0o644)
    assert command_problem("my-agent", {"PATH": str(tmp_path)}) == f"{program} is not executable"


def test_an_absolute_program_must_be_an_executable_file(tmp_path: Path) -> None:
    assert command_problem(f"{tmp_path}/none.sh x") == f"{tmp_path}/none.sh does not exist"
    assert command_problem(f"{tmp_path} x") == f"{tmp_path} is a directory"
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o600)
    assert command_problem(f"'{script}' --flag") == f"{script} is not executable"
    script.chmod(0o700)
    assert command_problem(f"'{script}' --flag") is None
