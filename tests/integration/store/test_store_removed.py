"""A SQLite store removed while a run writes to it (`rm -rf .benchyard` in another terminal): the run
fails at once, saying so in one line, instead of writing on into a file nobody can read again and
ending "finished" with exit 0 while every result was gone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import UNSANDBOXED, scenario, write_benchmark

RUN_LIMIT_SEC = 300  # only a run that never notices reaches it
WAIT_LIMIT_SEC = 120


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_LIMIT_SEC
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.parametrize("store", ["new", "at head"])
def test_removing_the_store_mid_run_fails_the_run_loudly(tmp_path: Path, store: str) -> None:
    """A new store is created and written through SQLAlchemy; one already at the head revision
    through sqlite3 (store/database.py): either notices."""
    bench = write_benchmark(tmp_path / "bench", [scenario(f"s{index}", "ok") for index in range(6)])
    started = tmp_path / "started"
    started.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "BENCHYARD_DB"}
    if store == "at head":
        made = subprocess.run(
            [sys.executable, "-m", "benchyard", "runs"], cwd=project, env=env, check=False
        )
        assert made.returncode == 0
    agent = f"touch {started}/$BENCHYARD_SCENARIO_ID; sleep 2; echo ok"
    command = ["run", str(bench), "--agent-cmd", agent, "-j", "1", "-q", *UNSANDBOXED]
    process = subprocess.Popen(
        [sys.executable, "-m", "benchyard", *command],
        cwd=project,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    # Once the second attempt starts, the first one's result is in the store: remove it then.
    _wait_for(lambda: len(list(started.iterdir())) >= 2, "the second attempt")
    store_file = project / ".benchyard" / "benchyard.db"
    assert store_file.is_file()
    shutil.rmtree(project / ".benchyard")
    try:
        out, err = process.communicate(timeout=RUN_LIMIT_SEC)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    assert process.returncode != 0, out
    assert "Traceback" not in err, err
    assert err.splitlines() == [
        f"error: the store file {store_file} was removed or replaced during the run: "
        "the results written to it since it was opened are lost"
    ]
    assert not store_file.exists()  # no empty store quietly put in its place
    assert len(list(started.iterdir())) < 6  # the run stopped, not played out to the end
