"""Ctrl-C stops a run cleanly: finished attempts are kept, running agents are killed."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from benchyard.store.store import Store
from tests.support import UNSANDBOXED, Cli, scenario, write_benchmark


def test_ctrl_c_keeps_finished_attempts(tmp_path: Path, cli: Cli, db_url: str) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario(f"s{i:02d}", "ok") for i in range(20)])
    marker = tmp_path / "sleepers"
    command = (
        'case "$BENCHYARD_SCENARIO_ID" in s0[0-4]) echo ok;; '
        f"*) echo $$ >> {marker}; sleep 60;; esac"
    )
    process = cli.process("run", str(bench), "--agent-cmd", command, "-j", "10", "-q", *UNSANDBOXED)
    deadline = time.monotonic() + 120  # a hang guard, not a time bound
    while time.monotonic() < deadline and (
        not marker.exists() or len(marker.read_text().split()) < 10
    ):
        time.sleep(0.1)
    assert marker.exists(), "the sleeping agents never started"
    time.sleep(0.3)  # let the five quick attempts be written
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted: run" in stderr
    assert "kept 5 finished attempts" in stderr
    assert "Traceback" not in stderr

    store = Store.open(db_url)
    run = store.resolve_run("latest")
    assert run.status == "interrupted"
    assert run.finished_at is not None
    kept = store.attempts(run.id)
    assert sorted(a.scenario_id for a in kept) == [f"s0{i}" for i in range(5)]
    assert all(a.verdict == "passed" for a in kept)
    for pid in marker.read_text().split():
        assert (
            not Path(f"/proc/{pid}").exists()
            or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]
        )
    store.close()
