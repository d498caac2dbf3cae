"""Who may remove what under the work root: a worker that took back a dead worker's claims removes
that worker's scratch, and nothing of a live process's. Pids are reused (quickly, on a loaded
machine with two test sessions): a pid seen dead before the claims were taken back may name a new
process by the time its scratch is removed, one that made a scratch of its own under that pid."""

from __future__ import annotations

import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchyard.runner.run_scratch import SCRATCH_PREFIX, remove_scratch_of
from benchyard.runner.workdir import make_scratch_layout


@pytest.fixture
def live_pid() -> Iterator[int]:
    """A live process: one that took a pid seen dead a moment earlier."""
    process = subprocess.Popen(["sleep", "60"])
    try:
        yield process.pid
    finally:
        process.kill()
        process.wait()


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def _scratch(work_root: Path, pid: int) -> Path:
    """A run's scratch as a worker makes it: named by run id and pid, with work/ and io/."""
    run_id = uuid.uuid4().hex[:16]
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{run_id}-{pid}-", dir=work_root))
    make_scratch_layout(scratch)
    (scratch / "work" / uuid.uuid4().hex).mkdir()
    return scratch


def test_the_scratch_of_a_process_that_took_a_dead_pid_is_kept(
    tmp_path: Path, live_pid: int
) -> None:
    """The reclaiming worker saw `live_pid` dead when it looked; a new process has it now, with a
    run in progress: its workdirs stay (removed, its next attempt failed with FileNotFoundError
    creating work/<id>)."""
    reused = _scratch(tmp_path, live_pid)
    gone = _scratch(tmp_path, _dead_pid())

    remove_scratch_of({live_pid, int(gone.name.split("-")[2])}, str(tmp_path))

    assert (reused / "work").is_dir() and len(list((reused / "work").iterdir())) == 1
    assert not gone.exists()


def test_only_run_scratch_of_the_pids_given_is_removed(tmp_path: Path) -> None:
    dead = _dead_pid()
    gone = _scratch(tmp_path, dead)
    other = _scratch(tmp_path, _dead_pid())
    derive = Path(tempfile.mkdtemp(prefix="benchyard-derive-", dir=tmp_path))
    make_scratch_layout(derive)

    remove_scratch_of({dead}, str(tmp_path))

    assert not gone.exists()
    assert other.is_dir() and (derive / "work").is_dir()
