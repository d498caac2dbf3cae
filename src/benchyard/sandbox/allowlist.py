"""Which host paths a sandbox shows beyond its system directories, and which it never shows.

A sandbox sees an allow-list, not the host: besides the system directories (bwrap: see
sandbox/hostview.py; docker: the image), only

- the agent's own code: for each existing absolute path its command names (its script, its
  interpreter), the script's directory, or the file alone when that directory is too wide (the
  project directory, a home directory, /tmp, anything holding a sealed path); for an
  executable in a `bin` directory, its installation prefix too (a virtualenv, a Python install),
  as named and as its links resolve;
- the paths a benchmark (`sandbox.readable`) or the agent's configuration (`readable`) declares,
  as declared (an explicit choice, even inside the benchmark's directory);

and never a sealed path: the benchmark's directory (its references and VCS metadata), the store,
benchyard's work root (every attempt's workdir); a sealed path inside a shown directory is
covered by an empty one. The project directory is never shown whole either (the agent's code
inside it may be).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

TOO_WIDE = frozenset(
    Path(name)
    for name in (
        "/",
        "/home",
        "/root",
        "/srv",
        "/run",
        "/var",
        "/tmp",
        "/mnt",
        "/media",
        "/opt",
        "/dev",
        "/dev/shm",
        "/proc",
        "/sys",
        "/boot",
        "/usr",
        "/etc",
    )
)
BIN_DIRS = frozenset({"bin", "sbin"})


@dataclass(frozen=True)
class HostPaths:
    """What a sandbox shows of the host besides its system directories, and what it hides."""

    readable: tuple[Path, ...] = ()  # shown read-only, each at its own place
    sealed: tuple[Path, ...] = ()  # never shown: covered where they lie inside a shown path

    def covered(self) -> tuple[Path, ...]:
        """The sealed paths that lie inside a shown path, which must be covered up."""
        return tuple(
            sorted(
                hidden
                for hidden in self.sealed
                if any(hidden != shown and hidden.is_relative_to(shown) for shown in self.readable)
            )
        )


def host_paths(
    named: Iterable[Path],
    declared: Iterable[Path],
    sealed: Iterable[Path],
    fenced: Iterable[Path] = (),
) -> HostPaths:
    """The allow-list for an agent whose command names `named` paths, with `declared` readable
    paths: nothing in or holding a `sealed` path (the benchmark, the store, the work root), no
    directory holding a `fenced` one (the project directory) shown whole."""
    sealed = tuple(sorted({_absolute(path) for path in sealed}))
    walls = (*sealed, *(_absolute(path) for path in fenced))
    shown = {path for name in named for path in code_paths(name, sealed, walls)}
    shown |= {path for path in map(_absolute, declared) if path.exists()}
    return HostPaths(tuple(sorted(shown)), sealed)


def code_paths(named: Path, sealed: Sequence[Path], walls: Sequence[Path]) -> list[Path]:
    """What the sandbox shows for one path the agent's command names (see the module's
    docstring): nothing inside a sealed path, no directory holding a wall."""
    if not named.is_absolute() or not named.exists():
        return []
    found: list[Path] = []
    for path in dict.fromkeys((_absolute(named), named.resolve())):
        if _inside_any(path, sealed):
            continue
        if path.is_dir():
            if not _too_wide(path, walls):
                found.append(path)
            continue
        directory = path.parent
        found.append(path if _too_wide(directory, walls) else directory)
        if _is_installed_program(path) and not _too_wide(directory.parent, walls):
            found.append(directory.parent)
    return found


@functools.cache
def home_directories() -> frozenset[Path]:
    """Every user's home directory on this host, and this process's."""
    import pwd

    homes = {Path(entry.pw_dir) for entry in pwd.getpwall() if entry.pw_dir}
    homes.add(Path.home())
    return frozenset(homes)


def _too_wide(directory: Path, walls: Sequence[Path]) -> bool:
    """A directory never shown whole: a system-wide one, a home, or one holding a wall."""
    if directory in TOO_WIDE or directory in home_directories() or len(directory.parts) < 3:
        return True
    return any(wall.is_relative_to(directory) for wall in walls)


def _is_installed_program(path: Path) -> bool:
    """An executable in a `bin` directory, whose installation (prefix/lib, ...) it needs."""
    return path.parent.name in BIN_DIRS and os.access(path, os.X_OK)


def _inside_any(path: Path, directories: Iterable[Path]) -> bool:
    return any(path.is_relative_to(directory) for directory in directories)


def _absolute(path: Path) -> Path:
    """An absolute path with `..` resolved but links kept (they are shown as they are named)."""
    return Path(os.path.abspath(path))
