"""The scratch directories of runs under the work root, `benchyard-<run id>-<pid>-*` (one per worker
process): those a run kept, and removing those of this node's workers that are gone. Who removes
what is in docs/architecture.md ("Who removes what under the work root")."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from benchyard.untrusted import remove_tree

SCRATCH_PREFIX = "benchyard-"
SCRATCH_OWNER = re.compile(rf"^{SCRATCH_PREFIX}[0-9a-f]+-(\d+)-")
"""A run's scratch directory name; its group is the pid of the process that made it."""


def kept_scratch(run_id: str, work_root: str | None) -> list[Path]:
    """The scratch directories a run's workers left under `work_root` (`--keep-workdirs`): each
    holds `work/<attempt id>` (the workdirs) and `io/<attempt id>` (the protocol files)."""
    root = Path(work_root or tempfile.gettempdir())
    return sorted(path for path in root.glob(f"{SCRATCH_PREFIX}{run_id}-*") if path.is_dir())


def pid_alive(pid: int) -> bool:
    """Whether a process of this node lives (a zombie does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def remove_scratch_of(pids: set[int], work_root: str | None) -> None:
    """Remove the attempt workdirs that dead workers of this node left behind. Each pid is looked
    at again as its directory is removed: `pids` were seen dead a while ago (before the claims
    were taken back), and a pid reused since names a live process, whose scratch is its own."""
    if not pids:
        return
    root = Path(work_root or tempfile.gettempdir())
    for entry in root.glob(f"{SCRATCH_PREFIX}*"):
        match = SCRATCH_OWNER.match(entry.name)
        if match and int(match.group(1)) in pids and not pid_alive(int(match.group(1))):
            remove_tree(entry, ignore_errors=True)
