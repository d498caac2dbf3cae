"""`run --enqueue`, `worker`, `cancel` and `--on-crash fail` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from benchyard.store.queue import Queue
from benchyard.store.store import Store
from tests.integration.queue.helpers import (
    WorkerProcess,
    logging_agent,
    mixed_benchmark,
    normalised_report,
    wait_for,
)
from tests.support import UNSANDBOXED, Cli


def _enqueue(cli: Cli, *args: str) -> str:
    result = cli("run", *args, "--enqueue")
    assert result.exit_code == 0, result.output
    return str(result.output.strip().splitlines()[-1])


def test_a_queued_run_matches_the_same_run_inline(tmp_path: Path, cli: Cli, store: Store) -> None:
    bench = mixed_benchmark(tmp_path / "bench")
    agent = ("--agent-cmd", logging_agent(tmp_path / "log", 0), "--epochs", "2", *UNSANDBOXED)
    assert cli("run", str(bench), *agent, "-q").exit_code == 0
    inline = store.resolve_run("latest")
    queued = _enqueue(cli, str(bench), *agent)
    assert store.get_run(queued).status == "queued"
    assert store.attempts(queued) == []
    drained = cli("worker", "--drain", "-j", "4")
    assert drained.exit_code == 0, drained.output
    assert store.get_run(queued).status == "finished"
    assert normalised_report(store, queued) == normalised_report(store, inline.id)
    assert normalised_report(store, inline.id)["summary"]["passed"] == 16


def test_cancelling_a_queued_run_runs_none_of_it(tmp_path: Path, cli: Cli, store: Store) -> None:
    bench = mixed_benchmark(tmp_path / "bench")
    queued = _enqueue(cli, str(bench), "--agent", "oracle")
    cancelled = cli("cancel", queued[:8])
    assert cancelled.exit_code == 0, cancelled.output
    assert "kept 0 finished attempts, dropped 12" in cancelled.output
    assert cli("worker", "--drain").exit_code == 0
    run = store.get_run(queued)
    assert (run.status, store.attempts(queued)) == ("cancelled", [])
    assert run.status_reason and run.status_reason.startswith("cancelled from")
    again = cli("cancel", queued[:8])
    assert again.exit_code == 2
    assert "already cancelled" in again.output


def test_cancelling_a_running_run_keeps_what_finished(
    tmp_path: Path, cli: Cli, store: Store, db_url: str
) -> None:
    bench = mixed_benchmark(tmp_path / "bench", passing=12, failing=0)
    slow = 'case "$BENCHYARD_SCENARIO_ID" in p0[0-3]) echo right;; *) sleep 30;; esac'
    queued = _enqueue(cli, str(bench), "--agent-cmd", slow, *UNSANDBOXED)
    log = tmp_path / "worker.log"
    worker = WorkerProcess(db_url, cli.cwd, log, "-j", "8", "--lease", "0.6")
    try:
        wait_for(lambda: len(store.attempts(queued)) == 4, 30, "the quick attempts")
        assert "kept 4 finished attempts, dropped 8" in cli("cancel", queued).output
        wait_for(lambda: "whose claim was lost" in log.read_text(), 30, "the worker to notice")
    finally:
        assert worker.stop() == 0
    run = store.get_run(queued)
    assert run.status == "cancelled"
    assert sorted(a.scenario_id for a in store.attempts(queued)) == [f"p0{i}" for i in range(4)]
    assert "stopped 8 running" in log.read_text()  # p04-p11; p00-p03 had finished


def test_on_crash_fail_fails_the_run_and_keeps_what_finished(
    tmp_path: Path, cli: Cli, store: Store, db_url: str
) -> None:
    bench = mixed_benchmark(tmp_path / "bench", passing=12, failing=0)
    slow = 'case "$BENCHYARD_SCENARIO_ID" in p0[0-2]) echo right;; *) sleep 30;; esac'
    queued = _enqueue(cli, str(bench), "--agent-cmd", slow, "--on-crash", "fail", *UNSANDBOXED)
    worker = WorkerProcess(db_url, cli.cwd, tmp_path / "worker.log", "-j", "4")
    try:
        wait_for(lambda: len(store.attempts(queued)) == 3, 30, "the quick attempts")
    finally:
        worker.kill()
    assert store.get_run(queued).status == "running"
    assert cli("worker", "--drain").exit_code == 0  # on restart: the run fails, nothing re-runs
    run = store.get_run(queued)
    assert run.status == "failed"
    assert run.status_reason and "--on-crash fail" in run.status_reason
    assert f":{worker.pid}:" in run.status_reason
    assert len(store.attempts(queued)) == 3
    [resume] = Queue(store).resumes(queued)
    assert (resume.action, resume.kept, resume.requeued) == ("failed", 3, 9)
    shown = cli("show", queued)
    assert "resume 1/1" in shown.output and "cancelled, run failed: 9" in shown.output
    report = json.loads(cli("report", queued, "--format", "json").output)
    assert report["run"]["resumes"][0]["action"] == "failed"


def test_an_inline_run_killed_mid_run_is_resumed_by_a_worker(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = mixed_benchmark(tmp_path / "bench")
    agent = logging_agent(tmp_path / "log", 0.1)
    inline = cli.process("run", str(bench), "--agent-cmd", agent, "-j", "2", *UNSANDBOXED, "-q")
    wait_for(lambda: store.count_runs() == 1, 120, "the run to start")
    run_id = store.resolve_run("latest").id
    wait_for(lambda: len(store.attempts(run_id)) >= 3, 120, "a few attempts")
    inline.kill()
    inline.communicate(timeout=60)
    kept = len(store.attempts(run_id))
    assert store.get_run(run_id).status == "running" and kept < 12
    assert cli("worker", "--drain").exit_code == 0
    assert store.get_run(run_id).status == "finished"
    assert sorted(a.scenario_id for a in store.attempts(run_id)) == sorted(
        [f"p{i:02d}" for i in range(8)] + [f"f{i:02d}" for i in range(4)]
    )
    [resume] = Queue(store).resumes(run_id)
    assert (resume.kept, resume.requeued) == (kept, 12 - kept)
    assert cli("show", run_id).output.count("resume 1/1") == 1


def test_a_worker_refuses_a_run_whose_benchmark_changed(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = mixed_benchmark(tmp_path / "bench")
    queued = _enqueue(cli, str(bench), "--agent", "oracle")
    manifest = bench / "benchmark.yaml"
    manifest.write_text(manifest.read_text() + "description: edited after queueing\n")
    drained = cli("worker", "--drain")
    assert drained.exit_code == 0
    run = store.get_run(queued)
    assert run.status == "failed"
    assert run.status_reason and f"changed since run {queued[:8]}" in run.status_reason
    assert "cancel the run and start a new one" in run.status_reason
    assert store.attempts(queued) == []


def test_on_crash_is_resume_or_fail(tmp_path: Path, cli: Cli) -> None:
    bench = mixed_benchmark(tmp_path / "bench")
    result = cli("run", str(bench), "--agent", "oracle", "--on-crash", "sometimes")
    assert result.exit_code == 2
    assert "sometimes" in result.output
