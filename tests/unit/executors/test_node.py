"""A try on a Ray node is runner/execute.py's own `one_try`, with the sandbox opened on the node;
a try the node could not prepare is recorded as an infrastructure fault. (No Ray needed here.)"""

from __future__ import annotations

from pathlib import Path

from benchyard.agents.registry import build_agent
from benchyard.benchmarks.loader import load_benchmark
from benchyard.executors.ray.driver import _failed_try
from benchyard.executors.ray.node import NodeTries, RunSpec, Shipped
from benchyard.runner.execute import RunSettings
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.plan import PlannedAttempt
from benchyard.runner.workdir import make_scratch_layout
from tests.support import run_record, scenario, write_benchmark


async def test_a_node_runs_a_try_as_a_local_worker_does(tmp_path: Path) -> None:
    bench = load_benchmark(
        str(write_benchmark(tmp_path / "b", [scenario("yes", "yes"), scenario("no", "no")]))
    )
    config = {"kind": "command", "command": "echo yes"}
    settings = RunSettings(sandbox="none", allow_unsandboxed=True, work_root=str(tmp_path))
    run = run_record(
        "f" * 16,
        status="running",
        benchmark_hash=bench.content_hash,
        agent_name="echo",
        agent_config=config,
        settings=settings.to_json(),
    )
    spec = RunSpec(run, ("yes", "no"), Shipped("sha256:00", None), (), {}, None)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    make_scratch_layout(scratch)
    tries = NodeTries(spec, bench, build_agent("echo", config), settings, scratch)
    passed, failure = await tries.one_try(PlannedAttempt(tries.scenario("yes"), 1), 1)
    assert (passed.verdict, passed.answer, passed.run_id, failure) == (
        "passed",
        "yes\n",  # the answer as the agent gave it (echo's newline)
        run.id,
        None,
    )
    failed, _ = await tries.one_try(PlannedAttempt(tries.scenario("no"), 2), 3)
    assert (failed.verdict, failed.epoch, failed.try_number) == ("failed", 2, 3)
    assert list((scratch / "work").iterdir()) == []  # each try's workdir is removed
    await tries.aclose()


def test_a_try_its_node_could_not_prepare_is_an_uncounted_error(tmp_path: Path) -> None:
    bench = load_benchmark(str(write_benchmark(tmp_path / "b", [scenario("a", "x")])))
    failure = AttemptFailure(FailureKind.SANDBOX_START, "Ray node vm/b: bwrap is not installed")
    record = _failed_try("r" * 16, PlannedAttempt(bench.scenarios[0], 1), 2, failure, "vm/b")
    assert (record.verdict, record.failure_kind, record.node, record.try_number) == (
        "error",
        "sandbox_start",
        "vm/b",
        2,
    )
    assert record.cause == "Ray node vm/b: bwrap is not installed"
