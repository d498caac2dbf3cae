"""Which host paths a sandbox shows beyond its system directories, and which it never shows.

A sandbox sees an allow-list, not the host: besides the system directories (bwrap: see
sandbox/hostview.py; docker: the image), only

- the agent's own code: for each existing absolute path its command names (its script, its
  interpreter), and for each interpreter that runs it in turn (`#!` lines, `/usr/bin/env NAME`,
  a virtualenv's base installation: sandbox/interpreters.py), the file's directory, or the file
  alone when that directory is too wide (the project directory, a home directory, /tmp, anything
  holding a sealed path); for an executable in a `bin` directory, its installation prefix too (a
  virtualenv, a Python install), as named and as its links resolve; for a file in a
  `node_modules` tree, that whole tree (a package's dependencies and platform builds);
- the paths a benchmark (`sandbox.readable`) or the agent's configuration (`readable`) declares,
  as declared (an explicit choice, even inside the benchmark's directory);

and never a sealed path: the benchmark's directory (its references and VCS metadata), the store,
benchyard's work root (every attempt's workdir), and every copy of benchyard's built-in library
(`benchyard/library`: its benchmarks' references) found in a shown path or in the system
directories (benchyard installed system-wide, or into the virtualenv the agent's interpreter comes
from), besides the running benchyard's own; a sealed path inside a shown directory, or inside the
system directories the sandbox shows, is covered by an empty one. The project directory is never
shown whole either (the agent's code inside it may be).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchyard.sandbox.base import SYSTEM_PATH
from benchyard.sandbox.interpreters import base_installation, interpreter_chain

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
# Where an installed benchyard's library lies below a prefix (a virtualenv, /usr, /usr/local, a
# `pip install --target` directory, a site directory).
SITE_DIRS = ("site-packages", "dist-packages")
LIBRARY_PATTERNS = (
    "benchyard/library",
    *(f"{site}/benchyard/library" for site in SITE_DIRS),
    *(f"lib*/python*/{site}/benchyard/library" for site in SITE_DIRS),
    *(f"local/lib*/python*/{site}/benchyard/library" for site in SITE_DIRS),
)
# The host directories a sandbox may show whole as its system (bwrap: sandbox/hostview.py).
SYSTEM_PREFIXES = tuple(map(Path, ("/usr", "/lib", "/lib32", "/lib64", "/libx32")))


@dataclass(frozen=True)
class HostPaths:
    """What a sandbox shows of the host besides its system directories, and what it hides."""

    readable: tuple[Path, ...] = ()  # shown read-only, each at its own place
    sealed: tuple[Path, ...] = ()  # never shown: covered where they lie inside a shown path

    def covered(self, system: Iterable[Path] = ()) -> tuple[Path, ...]:
        """The sealed paths that lie inside a shown path, or inside the `system` directories the
        sandbox shows too, which must be covered up."""
        shown = (*self.readable, *system)
        return tuple(
            sorted(
                hidden
                for hidden in self.sealed
                if any(hidden != place and hidden.is_relative_to(place) for place in shown)
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
    libraries = library_copies((*shown, *SYSTEM_PREFIXES))
    return HostPaths(tuple(sorted(shown)), tuple(sorted({*sealed, *libraries})))


def library_copies(roots: Iterable[Path]) -> tuple[Path, ...]:
    """Every copy of benchyard's built-in library (its benchmarks and their references) in or
    below the `roots`, as found and as its links resolve, and the running benchyard's own."""
    import benchyard

    found = {Path(benchyard.__file__).resolve().parent / "library"}
    for root in roots:
        if not root.is_dir():
            continue
        for pattern in LIBRARY_PATTERNS:
            for match in root.glob(pattern):
                if match.is_dir():
                    found |= {_absolute(match), match.resolve()}
    return tuple(sorted(found))


def code_paths(named: Path, sealed: Sequence[Path], walls: Sequence[Path]) -> list[Path]:
    """What the sandbox shows for one path the agent's command names (see the module's
    docstring), and for each interpreter it runs through: nothing inside a sealed path, no
    directory holding a wall."""
    if not named.is_absolute() or not named.exists():
        return []
    return [path for program in program_chain(named) for path in _shown(program, sealed, walls)]


def program_chain(named: Path) -> list[Path]:
    """`named`, the interpreters it runs through (its `#!` line, `/usr/bin/env NAME` on the
    sandbox's PATH, nested), and the base installation of each that lies in a virtualenv."""
    chain = [named]
    chain += (s.path for s in interpreter_chain(named, SYSTEM_PATH) if s.path and s.path.exists())
    for program in tuple(chain):
        base = base_installation(program)
        if base is not None and base.is_dir():
            chain.append(base.parent if base.name in BIN_DIRS else base)
    return [path for path in dict.fromkeys(chain) if path.is_absolute()]


def _shown(named: Path, sealed: Sequence[Path], walls: Sequence[Path]) -> list[Path]:
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
        packages = _node_modules(path)
        if packages is not None and not _too_wide(packages, walls):
            found.append(packages)  # a package's dependencies and platform builds are siblings
    return found


def _node_modules(path: Path) -> Path | None:
    """The outermost `node_modules` directory `path` lies in, if any."""
    if "node_modules" not in path.parts:
        return None
    return Path(*path.parts[: path.parts.index("node_modules") + 1])


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
