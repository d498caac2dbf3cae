"""Each attempt's private workdir (the agent's cwd, holding the fixtures) and its protocol files,
kept outside the workdir so that they never show up in what the agent changed. Both belong to the
sandbox user (sandbox/identity.py), never to root."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from benchyard.sandbox.identity import sandbox_user
from benchyard.spec.models import FixtureFile, Scenario
from benchyard.untrusted import remove_tree, walk_tree


@dataclass(frozen=True)
class AttemptDirs:
    workdir: Path
    io_dir: Path  # the protocol files, outside the workdir

    def remove(self) -> None:
        remove_tree(self.workdir, ignore_errors=True)
        remove_tree(self.io_dir, ignore_errors=True)


def make_scratch_layout(scratch: Path) -> None:
    (scratch / "work").mkdir()
    (scratch / "io").mkdir()


def prepare_dirs(
    scratch: Path, attempt_id: str, scenario: Scenario, scenario_dir: Path
) -> AttemptDirs:
    """Create the attempt's workdir under `scratch` (laid out by make_scratch_layout), copy its
    fixtures, and hand both directories over to the sandbox user."""
    dirs = AttemptDirs(scratch / "work" / attempt_id, scratch / "io" / attempt_id)
    dirs.workdir.mkdir()
    dirs.io_dir.mkdir()
    copy_fixtures(scenario.fixtures.files, scenario_dir, dirs.workdir)
    sandbox_user().hand_over(dirs.workdir, dirs.io_dir)
    return dirs


def copy_fixtures(files: Iterable[FixtureFile], scenario_dir: Path, root: Path) -> None:
    """Copy fixture files under `root`. Each replaces whatever is at its destination (a directory
    replaces a directory whole, except at the root, where it is merged in), and a symbolic link
    found there, left by an agent's patch, is never followed. A link among the fixtures is copied
    as the link it is, never as the host file it points at (the loader refuses links that leave
    the benchmark); anything but files, links and directories is left out."""
    for fixture in files:
        if fixture.content is not None:
            fresh_target(root, fixture.dest).write_text(fixture.content, encoding="utf-8")
            continue
        assert fixture.src is not None
        source = scenario_dir / fixture.src
        if source.is_symlink() or not source.is_dir():
            _copy_entry(source, fresh_target(root, fixture.dest))
            continue
        if PurePosixPath(fixture.dest).parts:
            fresh_target(root, fixture.dest)
        for path in _tree(source):
            relative = PurePosixPath(fixture.dest, path.relative_to(source).as_posix())
            _copy_entry(path, fresh_target(root, str(relative)))
        _fresh_directory(root, fixture.dest)


def _tree(source: Path) -> list[Path]:
    """The files and links below `source`, sorted, without following links to directories."""
    found = []
    for directory, _, names in walk_tree(source):
        found += [directory / name for name in names]
    return sorted(found)


def _copy_entry(source: Path, target: Path) -> None:
    """Copy a fixture file, or recreate a link as a link; other kinds of entry are left out."""
    if source.is_symlink():
        target.symlink_to(os.readlink(source))
    elif source.is_file():
        _copy_file(source, target)


def _copy_file(source: Path, target: Path) -> None:
    """Copy the content, and the executable bit (never a read-only mode from an installed library)."""
    shutil.copyfile(source, target)
    if os.access(source, os.X_OK):
        target.chmod(0o755)


def _fresh_directory(root: Path, relative: str) -> Path:
    """`root/relative` as a real directory inside `root`, replacing links and files in the way."""
    current = root
    for part in PurePosixPath(relative).parts:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
        current.mkdir(exist_ok=True)
    return current


def fresh_target(root: Path, relative: str) -> Path:
    """A writable path for a file at `root/relative`, with nothing there and a real parent directory."""
    path = PurePosixPath(relative)
    target = _fresh_directory(root, str(path.parent)) / path.name
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        remove_tree(target)
    return target
