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


def _script(path: Path, first_line: str, body: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{first_line}\n{body}")
    path.chmod(0o755)
    return path


def test_a_script_whose_interpreter_is_gone_is_refused_naming_it(tmp_path: Path) -> None:
    interpreter = _script(tmp_path / "base" / "bin" / "interp", "#!/bin/sh", 'exec /bin/sh "$@"')
    tool = _script(tmp_path / "tool" / "bin" / "agent", f"#!{interpreter}", "echo hi")
    assert command_problem(str(tool)) is None
    interpreter.unlink()
    assert command_problem(str(tool)) == f"{tool}'s interpreter: {interpreter} does not exist"
    assert command_problem("agent", {"PATH": str(tool.parent)}) is not None  # found on a PATH


def test_an_env_interpreter_is_looked_up_on_the_agents_path(tmp_path: Path) -> None:
    tool = _script(tmp_path / "agent.js", "#!/usr/bin/env -S no-such-node --flag")
    problem = command_problem(str(tool))
    assert problem is not None
    assert problem.startswith(f"{tool}'s interpreter 'no-such-node' is not found on the agent's")
    assert command_problem(str(_script(tmp_path / "ok.sh", "#!/usr/bin/env sh"))) is None


def test_a_virtualenv_whose_base_is_gone_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "python" / "bin"
    python = _script(base / "python3", "#!/bin/sh")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(python)
    (venv / "pyvenv.cfg").write_text(f"home = {base}\ninclude-system-site-packages = false\n")
    mini = _script(venv / "bin" / "mini", f"#!{venv}/bin/python")
    assert command_problem(str(mini)) is None
    python.unlink()
    assert command_problem(str(mini)) == f"{mini}'s interpreter: {venv}/bin/python does not exist"
    (venv / "bin" / "python").unlink()
    _script(venv / "bin" / "python", "#!/bin/sh")  # a copy (`venv --copies`): its base is gone
    base.rmdir()
    problem = command_problem(str(mini))
    assert problem is not None and f"whose base ({base}) is gone" in problem


def test_a_fifo_named_as_a_program_is_not_waited_on(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "agent"
    os.mkfifo(fifo)
    fifo.chmod(0o755)
    # refused from its type alone: its `#!` line is never read, so nothing blocks
    assert command_problem(str(fifo)) == f"{fifo} is not a regular file"
