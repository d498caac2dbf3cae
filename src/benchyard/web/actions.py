"""What the web UI changes, through the library the CLI calls (runner/api.py, store/queue.py):
queue a run, queue a rerun of what failed, stop a run. A queued run is executed by `benchyard
worker`, never by the web server. A rescore has no queue of its own: it is started as a
`benchyard rescore` process apart from the server, which returns at once."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from benchyard.config import ProjectConfig
from benchyard.errors import BenchyardError
from benchyard.runner.execute import RunSettings
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

RESCORE_LOG_DIR = Path(".benchyard") / "rescores"


class ActionRefused(BenchyardError):
    """A request the library would refuse, said before anything is recorded."""


@dataclass(frozen=True)
class RunRequest:
    """A run to queue, as the queue page's form gives it (the options of `benchyard run`)."""

    benchmark_path: Path
    agent: str
    filters: tuple[str, ...] = ()
    epochs: int = 1
    limit: int | None = None
    timeout_sec: float | None = None
    concurrency: int = 8
    sandbox: str | None = None
    allow_unsandboxed: bool = False
    network: str | None = None  # as --network: none, bridge (None), all or HOST:PORT,...
    allow_network: bool = False  # network `all`, as before `network`


def enqueue_run(
    store: Store, config: ProjectConfig, request: RunRequest, agent_repo: Path
) -> RunRecord:
    """Plan the run as `benchyard run --enqueue` does and put it in the queue."""
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.runner.api import enqueue, judge_for, plan_run, resolve_agent
    from benchyard.sandbox.network import NetworkSpecError, requested_network
    from benchyard.sandbox.registry import default_sandbox_name

    try:
        network = requested_network(request.network, request.allow_network)
    except NetworkSpecError as error:
        raise ActionRefused(f"network: {error}") from None
    agent = resolve_agent(config, request.agent, None)
    benchmark = load_benchmark(request.benchmark_path)
    settings = RunSettings(
        concurrency=request.concurrency,
        epochs=request.epochs,
        limit=request.limit,
        filters=request.filters,
        timeout_sec=request.timeout_sec,
        judge=judge_for(config),
        sandbox=request.sandbox or default_sandbox_name(),
        allow_unsandboxed=request.allow_unsandboxed,
        network=network,
    )
    plan = plan_run(benchmark, settings)
    return enqueue(store, benchmark, agent, plan, settings, agent_repo=agent_repo)


def enqueue_rerun(store: Store, parent: RunRecord, agent_repo: Path) -> RunRecord:
    """Queue a run of the failed, errored and timed-out attempts of `parent`, linked to it."""
    from benchyard.runner.api import enqueue, plan_rerun

    rerun = plan_rerun(store, parent)
    return enqueue(
        store,
        rerun.benchmark,
        rerun.agent,
        rerun.plan,
        rerun.settings,
        agent_repo=agent_repo,
        parent_run_id=parent.id,
    )


def cancel_run(store: Store, run: RunRecord, who: str) -> str:
    from benchyard.store.queue import Queue

    stopped = Queue(store).stop_run(run.id, "cancelled", f"cancelled from the web UI ({who})")
    return (
        f"cancelled run {run.id[:8]}: kept {stopped.kept} finished attempts, "
        f"dropped {stopped.dropped} queued or running"
    )


def start_rescore(store: Store, run: RunRecord, workdir: Path) -> Path:
    """Start `benchyard rescore RUN` in a process of its own (its own session: the server's end
    does not stop it); its output goes to the log file returned."""
    if run.status in ("queued", "running"):
        raise ActionRefused(f"run {run.id[:8]} is {run.status}: rescore it once it has ended")
    logs = workdir / RESCORE_LOG_DIR
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{run.id}.log"
    environment = {**os.environ, "BENCHYARD_DB": store.url}
    with log.open("ab") as output:
        process = subprocess.Popen(
            # -P: `-m` would put the working directory first on sys.path, where a project's own
            # queue.py or typing.py would be imported in place of the standard library's
            [sys.executable, "-P", "-m", "benchyard", "rescore", run.id, "--quiet"],
            cwd=workdir,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    threading.Thread(target=process.wait, name=f"rescore-{run.id[:8]}", daemon=True).start()
    return log
