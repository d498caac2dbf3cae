"""The interpreters a program runs through: a script's `#!` line (directly, or `/usr/bin/env NAME`
looked up on a PATH), nested as Linux allows, and a virtualenv's base installation (`pyvenv.cfg`'s
`home`). The sandbox shows the whole chain read-only (sandbox/allowlist.py), and a run whose chain
is broken is refused before it starts (runner/preflight.py).

The programs read here are the agent's own code on the host, which the user named; still, a
program is opened without blocking (a FIFO named as one answers nothing) and only its first
bytes are read."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SHEBANG_BYTES = 256  # what Linux reads of a `#!` line (BINPRM_BUF_SIZE)
NESTED_SCRIPTS = 4  # how many interpreter scripts Linux follows in a row
VENV_CONFIG_BYTES = 64 * 1024


@dataclass(frozen=True)
class Interpreter:
    """One link of a program's chain: the interpreter as its `#!` line names it, and where it
    is (None when `/usr/bin/env` finds no such name on the PATH)."""

    named: str
    path: Path | None


def interpreter_chain(program: Path, search_path: str) -> Iterator[Interpreter]:
    """`program`'s interpreters, its own first, as far as the kernel would follow them."""
    current = program
    for _ in range(NESTED_SCRIPTS):
        step = _interpreter_of(current, search_path)
        if step is None:
            return
        yield step
        if step.path is None:
            return
        current = step.path


def base_installation(program: Path) -> Path | None:
    """The directory of the base interpreter (`home` in `pyvenv.cfg`) of the virtualenv whose
    `bin/` holds `program`, or None when it lies in none."""
    head = _head(program.parent.parent / "pyvenv.cfg", VENV_CONFIG_BYTES)
    if head is None:
        return None
    for line in head.decode(errors="replace").splitlines():
        key, separator, value = line.partition("=")
        if separator and key.strip() == "home" and value.strip():
            return Path(value.strip())
    return None


def _interpreter_of(program: Path, search_path: str) -> Interpreter | None:
    head = _head(program, SHEBANG_BYTES)
    if head is None or not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode(errors="replace")
    words = line.split()
    if not words:
        return None
    if Path(words[0]).name != "env":
        return Interpreter(words[0], Path(words[0]))
    # `#!/usr/bin/env -S node --flag`: the first word that is not an option nor an assignment
    named = next((w for w in words[1:] if not w.startswith("-") and "=" not in w), None)
    if named is None:
        return Interpreter(words[0], Path(words[0]))
    if "/" in named:
        return Interpreter(named, Path(named))
    found = shutil.which(named, path=search_path)
    return Interpreter(named, Path(found) if found else None)


def _head(path: Path, limit: int) -> bytes | None:
    """The first `limit` bytes of a regular file, or None for anything else."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return os.read(descriptor, limit)
    except OSError:
        return None
    finally:
        os.close(descriptor)
