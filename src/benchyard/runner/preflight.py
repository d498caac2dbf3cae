"""Before a run starts: can the agent's command run at all? A typo in `--agent-cmd` would
otherwise fail every attempt with exit 127 and leave CI green.

The command's program is the first word of its first simple command, after `NAME=value`
assignments. A name without a slash is looked up on the PATH the agent gets (the sandbox's
system PATH, or a PATH the command or the agent's `env` sets), an absolute path is looked at
directly. Whatever cannot be resolved without running a shell is left to the shell: builtins and
keywords (`cd`, `exec`, `if`), expansions (`$X`, `~`, globs), subshells, redirections first, a
relative path (it may be one of the scenario's fixtures, found in the workdir). Commands run in a
docker image, or on another machine, are not looked at: this machine's files say nothing of them.

A program found is followed through the interpreters that run it (sandbox/interpreters.py): a
`#!` line naming an interpreter that is gone, or a virtualenv whose base installation is gone,
stops the run as a missing program does.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from benchyard.runner.recorded import RunRefused
from benchyard.sandbox.base import SYSTEM_PATH
from benchyard.sandbox.interpreters import base_installation, interpreter_chain

if TYPE_CHECKING:
    from collections.abc import Mapping

    from benchyard.agents.base import Agent

ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
UNRESOLVED = re.compile(r"[$`*?\[\]{}~\\]")  # expansions and globs: the shell's to resolve
PUNCTUATION = "();<>|&"
SHELL_WORDS = frozenset(
    {
        *("!", ".", ":", "[", "[[", "{", "}", "alias", "bg", "break", "builtin", "case", "cd"),
        *("command", "continue", "declare", "do", "done", "echo", "elif", "else", "esac"),
        *("eval", "exec", "exit", "export", "false", "fc", "fg", "fi", "for", "function"),
        *("getopts", "hash", "if", "in", "jobs", "kill", "let", "local", "printf", "pwd"),
        *("read", "readonly", "return", "select", "set", "shift", "source", "test", "then"),
        *("time", "times", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias"),
        *("unset", "until", "wait", "while"),
    }
)
"""Builtins and keywords of POSIX sh, dash and bash: never looked up on the PATH."""
SANDBOXES_ON_THIS_HOST = frozenset({"bwrap", "none"})


def refuse_unrunnable_agent(agent: Agent, sandbox: str) -> None:
    """Refuse (RunRefused, exit 2) a command agent whose program cannot be found or run."""
    from benchyard.agents.registry import as_command_agent

    command_agent = as_command_agent(agent)
    if command_agent is None or sandbox not in SANDBOXES_ON_THIS_HOST:
        return
    problem = command_problem(command_agent.config.command, command_agent.config.env)
    if problem is not None:
        raise RunRefused(f"the agent's command cannot run: {problem}")


def command_problem(command: str, env: Mapping[str, str] | None = None) -> str | None:
    """Why `command`'s program cannot run, as one line; None when it can or cannot be told."""
    words = _words(command)
    if words is None:
        return None
    search_path = (env or {}).get("PATH", SYSTEM_PATH)
    while words and ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        if UNRESOLVED.search(value):
            return None
        if name == "PATH":
            search_path = value
    if not words or UNRESOLVED.search(search_path):
        return None
    return _program_problem(words[0], search_path)


def _words(command: str) -> list[str] | None:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=PUNCTUATION)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: the shell will say so itself
        return None


def _program_problem(program: str, search_path: str) -> str | None:
    if (
        program in SHELL_WORDS
        or program[0] in PUNCTUATION
        or program.isdigit()  # `2>/dev/null cmd`: a redirection first
        or UNRESOLVED.search(program)
    ):
        return None
    if "/" not in program:
        return _named_problem(program, search_path)
    if not program.startswith("/"):
        return None  # relative to the workdir, where the scenario's fixtures are
    return _file_problem(Path(program), search_path)


def _named_problem(program: str, search_path: str) -> str | None:
    found = shutil.which(program, path=search_path)
    if found is not None:
        return _chain_problem(Path(found), search_path)
    for directory in filter(None, search_path.split(os.pathsep)):
        candidate = Path(directory) / program
        if candidate.is_file():
            return f"{candidate} is not executable"
    return f"'{program}' is not found on the agent's PATH ({search_path})"


def _file_problem(path: Path, search_path: str) -> str | None:
    return _executable_problem(path) or _chain_problem(path, search_path)


def _executable_problem(path: Path) -> str | None:
    if not path.exists():
        return f"{path} does not exist"  # a dangling link too: what it points to is gone
    if path.is_dir():
        return f"{path} is a directory"
    if not path.is_file():  # a FIFO, socket or device: exec refuses it whatever its mode says
        return f"{path} is not a regular file"
    if not os.access(path, os.X_OK):
        return f"{path} is not executable"
    return None


def _chain_problem(program: Path, search_path: str) -> str | None:
    """What breaks the chain of interpreters `program` runs through (its `#!` lines, nested),
    or the virtualenv base installation one of them needs."""
    for step in interpreter_chain(program, search_path):
        if step.path is None:
            return (
                f"{program}'s interpreter '{step.named}' is not found on the agent's PATH "
                f"({search_path})"
            )
        problem = _executable_problem(step.path)
        if problem is not None:
            return f"{program}'s interpreter: {problem}"
        base = base_installation(step.path)
        if base is not None and not base.is_dir():
            return f"{program}'s interpreter {step.path} is in a virtualenv whose base ({base}) is gone"
    return None
