"""The directories bwrap makes above each writable path (sandbox/hostview.py parent_dirs_args),
worked out on text at every command: each once, outermost first, none inside the system's."""

from __future__ import annotations

from pathlib import Path

from benchyard.sandbox.bwrap import PROVIDED
from benchyard.sandbox.hostview import parent_dirs_args


def _dirs(args: list[str]) -> list[str]:
    assert args[0::4] == ["--perms"] * (len(args) // 4)
    return args[3::4]


def test_each_directory_above_is_made_once_outermost_first() -> None:
    made = set(PROVIDED)
    workdir = parent_dirs_args(Path("/srv/scratch/work/a1"), made)
    io_dir = parent_dirs_args(Path("/srv/scratch/io/a1"), made)
    assert _dirs(workdir) == ["/srv", "/srv/scratch", "/srv/scratch/work"]
    assert _dirs(io_dir) == ["/srv/scratch/io"]


def test_directories_the_view_has_are_not_made_again() -> None:
    made = set(PROVIDED)
    assert _dirs(parent_dirs_args(Path("/dev/shm/benchyard-1/work/a1"), made)) == [
        "/dev/shm/benchyard-1",
        "/dev/shm/benchyard-1/work",
    ]
    assert parent_dirs_args(Path("/usr/local/lib/x"), made) == []  # bound whole: the system's
    assert parent_dirs_args(Path("/tmp"), made) == []
