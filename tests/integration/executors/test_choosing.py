"""`--executor` and `--ray-address` on the command line: wrong combinations are one-line errors
(exit 2) before anything is recorded."""

from __future__ import annotations

from pathlib import Path

from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark


def test_an_executor_is_the_workers_choice_and_a_wrong_one_is_refused(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(tmp_path / "b", [scenario("a", "x")])
    queued = cli("run", str(bench), "--agent", "oracle", "--enqueue", "--executor", "ray")
    assert queued.exit_code == 2
    assert "a queued run executes where its worker runs it" in queued.output
    unknown = cli("run", str(bench), "--agent", "oracle", "--executor", "slurm")
    assert unknown.exit_code == 2
    assert "error: unknown executor 'slurm' (known: local, ray" in unknown.output
    stray = cli("worker", "--drain", "--ray-address", "10.0.0.1:6379")
    assert stray.exit_code == 2 and "it goes with --executor ray" in stray.output
    assert store.list_runs(10) == []
    local = cli("run", str(bench), "--agent", "oracle", "--executor", "local", "-q")
    assert local.exit_code == 0, local.output
