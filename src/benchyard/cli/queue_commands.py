"""Commands of the durable queue: worker, cancel (and what `run --enqueue` says)."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.executor_options import ConcurrencyOption, ExecutorOption, RayAddressOption
from benchyard.cli.options import DbOption, ListFormatOption, RunArg, check_list_format

if TYPE_CHECKING:
    from benchyard.store.records import RunRecord


def tell_queued(run: RunRecord, *, quiet: bool = False) -> None:
    """Say on stderr that `run` was queued, and print its id on stdout (unless `quiet`: the
    caller prints a JSON document there instead)."""
    from benchyard.report.render import plural

    typer.echo(
        f"queued run {run.id} ({plural(run.planned_attempts, 'attempt')}); start a worker: "
        "benchyard worker",
        err=True,
    )
    if not quiet:
        typer.echo(run.id)


def _log(message: str) -> None:
    typer.echo(f"{datetime.now():%H:%M:%S} {message}", err=True)


@handle_errors
def worker(
    concurrency: ConcurrencyOption = None,
    drain: Annotated[
        bool, typer.Option("--drain", help="Stop once the queue is empty instead of waiting.")
    ] = False,
    run_ref: Annotated[
        str | None, typer.Option("--run", help="Take attempts of this run only.")
    ] = None,
    lease: Annotated[
        float,
        typer.Option(
            "--lease",
            min=0.3,
            help="Seconds a claim holds without a heartbeat; a lost worker's attempts go back "
            "to the queue after this.",
        ),
    ] = 60.0,
    poll: Annotated[
        float, typer.Option("--poll", min=0.01, help="Seconds between looks at an empty queue.")
    ] = 1.0,
    work_root: Annotated[
        Path | None,
        typer.Option(
            "--work-root", help="Where attempt workdirs go (default /dev/shm, else $TMPDIR)."
        ),
    ] = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    db: DbOption = None,
) -> None:
    """Execute queued runs in this process (or on a Ray cluster, with --executor ray); several
    workers may share one PostgreSQL store."""
    from benchyard.automation.hooks import listen_to_workers
    from benchyard.cli.context import load_project, open_store
    from benchyard.cli.executor_options import open_executor
    from benchyard.runner.api import run_worker
    from benchyard.runner.execute import default_work_root
    from benchyard.runner.worker import WorkerOptions

    listen_to_workers()  # schedules fired, ended runs announced, webhooks sent
    store = open_store(db, load_project())
    where = open_executor(executor, ray_address, _log)
    concurrency = where.lanes(concurrency)
    options = WorkerOptions(
        concurrency=concurrency,
        lease_sec=lease,
        poll_sec=poll,
        drain=drain,
        run_id=store.resolve_run(run_ref).id if run_ref else None,
        work_root=str(work_root) if work_root else default_work_root(),
    )
    on = "" if where.name == "local" else f" on {where.name}"
    _log(
        f"worker started ({concurrency} at once{on}{', until the queue is empty' if drain else ''})"
    )
    try:
        run_worker(store, options, _log, where)
    finally:
        where.close()
    _log("worker stopped")


@handle_errors
def cancel(run_ref: RunArg, format: ListFormatOption = "table", db: DbOption = None) -> None:
    """Cancel a queued or running run; the attempts that finished are kept."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.report.render import plural
    from benchyard.runner.provenance import host_name
    from benchyard.store.queue import Queue

    check_list_format(format)
    store = open_store(db, load_project())
    run = store.resolve_run(run_ref)
    stopped = Queue(store).stop_run(run.id, "cancelled", f"cancelled from {host_name()}")
    if format == "json":
        from benchyard.report.listing import dump_json
        from benchyard.report.outputs import CancelOutput

        output = CancelOutput(run_id=run.id, kept=stopped.kept, dropped=stopped.dropped)
        sys.stdout.write(dump_json(output))
        return
    typer.echo(
        f"cancelled run {run.id[:8]}: kept {plural(stopped.kept, 'finished attempt')}, "
        f"dropped {stopped.dropped} queued or running"
    )
