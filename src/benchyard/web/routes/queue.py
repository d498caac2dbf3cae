"""The queue: runs with queued, claimed and finished attempts, the workers seen through their
claims, and the forms that queue a run, rerun what failed, rescore or cancel. Every one of those
changes goes through runner/api.py or store/queue.py (web/actions.py); workers execute."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, Form
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from benchyard.errors import BenchyardError
from benchyard.runner.provenance import host_name
from benchyard.store.browse import open_attempts, queue_counts, queue_runs, rescore_runs, workers
from benchyard.store.records import RunRecord
from benchyard.web.access import wants_json
from benchyard.web.actions import (
    ActionRefused,
    RunRequest,
    cancel_run,
    enqueue_rerun,
    enqueue_run,
    start_rescore,
)
from benchyard.web.csrf import csrf_guard
from benchyard.web.models import (
    ActionResult,
    QueuedAttemptRow,
    QueuePage,
    QueueRunRow,
    WorkerRow,
)
from benchyard.web.routing import page
from benchyard.web.rows import run_rows
from benchyard.web.state import AppState, app_state

router = APIRouter()
actions = APIRouter(dependencies=[Depends(csrf_guard)])
State = Annotated[AppState, Depends(app_state)]
RUN_ID = re.compile(r"^[0-9a-f]{1,32}$")
RESCORE_WAIT_SEC = 5.0  # how long a rescore's answer waits for its new run to be recorded
RESCORES_SHOWN = 20
# A refusal the library words for the command line, said in the queue form's words.
WEB_WORDS = (
    (re.compile(r"pass --allow-unsandboxed"), "tick 'allow unsandboxed'"),
    (re.compile(r"(?<!serve )--allow-unsandboxed"), "'allow unsandboxed' (tick it)"),
    (re.compile(r"(?<!serve )--allow-network"), "'allow network' (tick it)"),
    (re.compile(r"--sandbox (\w+) or (\w+)"), r"the sandbox '\1' or '\2' in the form"),
    (re.compile(r"choose --sandbox (\w+)"), r"choose the sandbox '\1' in the form"),
    (re.compile(r"--sandbox (\w+)"), r"the sandbox '\1'"),
)


@page(router, "/queue")
def queue_page(
    request: Request, state: State, rescoring: str = "", since: float | None = None
) -> Response:
    return state.renderer.respond(request, "queue.html", _queue(state, rescoring, since=since))


def _queue(
    state: AppState, rescoring: str = "", message: str | None = None, since: float | None = None
) -> QueuePage:
    from benchyard.sandbox.registry import default_sandbox_name, sandbox_names

    runs = queue_runs(state.store)
    counts = queue_counts(state.store, [run.id for run in runs])
    now = datetime.now(UTC)
    message_run = None
    if rescoring and RUN_ID.match(rescoring):
        new = _rescore_of(state, rescoring, since)
        message_run = new.id if new else None
        message = _rescoring_message(rescoring, new)
    return QueuePage(
        runs=[
            QueueRunRow(
                run=row,
                queued=counts[row.id].queued if row.id in counts else 0,
                claimed=counts[row.id].claimed if row.id in counts else 0,
                done=counts[row.id].done if row.id in counts else 0,
                cancelled=counts[row.id].cancelled if row.id in counts else 0,
                stuck=counts[row.id].stuck if row.id in counts else 0,
            )
            for row in run_rows(state.store, runs)
        ],
        attempts=[QueuedAttemptRow(**vars(item)) for item in open_attempts(state.store)],
        workers=[
            WorkerRow(
                **vars(claims),
                lease_left_sec=(claims.lease_expires_at - now).total_seconds()
                if claims.lease_expires_at
                else None,
            )
            for claims in workers(state.store)
        ],
        benchmarks=[known.name for known in state.catalog.known(state.recorded())],
        agents=sorted({*state.config.project.agents, "oracle"}),
        sandboxes=sorted(sandbox_names()),
        default_sandbox=default_sandbox_name(),
        rescores=run_rows(state.store, rescore_runs(state.store, limit=RESCORES_SHOWN)),
        message=message,
        message_run=message_run,
    )


def _rescore_of(state: AppState, original: str, since: float | None) -> RunRecord | None:
    """The newest rescore of the run `original` started at `since` (seconds since the epoch) or
    later; None while none is recorded."""
    moment = datetime.fromtimestamp(since, UTC) if since is not None else None
    found = rescore_runs(state.store, of=original, since=moment, limit=1)
    return found[0] if found else None


def _rescoring_message(original: str, new: RunRecord | None) -> str:
    if new is None:
        return (
            f"rescoring run {original[:8]} in a process of its own: its new run is not recorded "
            f"yet (reload this page; its output goes to .benchyard/rescores/{original}.log)"
        )
    return f"rescoring run {original[:8]} into run {new.id} ({new.status})"


def in_web_words(message: str) -> str:
    """A refusal worded for the command line (`--allow-unsandboxed`, `--sandbox docker`) in the
    words of the queue form (its checkboxes and its sandbox choice)."""
    for pattern, words in WEB_WORDS:
        message = pattern.sub(words, message)
    return message


def _done(request: Request, result: ActionResult, target: str) -> Response:
    if wants_json(request):
        return JSONResponse(result.model_dump(mode="json"), status_code=200 if result.ok else 400)
    return RedirectResponse(target, status_code=303)


def _refused(request: Request, state: AppState, error: BenchyardError) -> Response:
    words = in_web_words(str(error))
    if "tick 'allow unsandboxed'" in words and not state.config.allow_unsandboxed:
        words += (
            " (this server queues such a run only when started with "
            "`benchyard serve --allow-unsandboxed`)"
        )
    result = ActionResult(ok=False, message=words)
    if wants_json(request):
        return JSONResponse(result.model_dump(mode="json"), status_code=400)
    shown = _queue(state, message=f"refused: {words}")
    return state.renderer.respond(request, "queue.html", shown, status_code=400)


@page(actions, "/queue/runs", methods=("POST",))
def queue_run(
    request: Request,
    state: State,
    benchmark: Annotated[str, Form()],
    agent: Annotated[str, Form()],
    filters: Annotated[str, Form()] = "",
    epochs: Annotated[int, Form(ge=1, le=1000)] = 1,
    limit: Annotated[str, Form()] = "",
    timeout: Annotated[str, Form()] = "",
    concurrency: Annotated[int, Form(ge=1, le=1024)] = 8,
    sandbox: Annotated[str, Form()] = "",
    allow_unsandboxed: Annotated[bool, Form()] = False,
    network: Annotated[str, Form()] = "",
    allow_network: Annotated[bool, Form()] = False,
) -> Response:
    """Queue a run, as `benchyard run BENCHMARK --agent AGENT --enqueue` would."""
    try:
        _refuse_unsandboxed(state, allow_unsandboxed)
        known = state.benchmark(benchmark)
        if known is None:
            raise ActionRefused(f"no benchmark '{benchmark}' on disk")
        run = enqueue_run(
            state.store,
            state.config.project,
            RunRequest(
                benchmark_path=known.path,
                agent=agent,
                filters=tuple(part.strip() for part in re.split(r"[,\n]", filters) if part.strip()),
                epochs=epochs,
                limit=_positive_int(limit, "limit"),
                timeout_sec=_positive_float(timeout, "timeout"),
                concurrency=concurrency,
                sandbox=sandbox or None,
                allow_unsandboxed=allow_unsandboxed,
                network=network.strip() or None,
                allow_network=allow_network,
            ),
            agent_repo=state.workdir,
        )
    except BenchyardError as error:
        return _refused(request, state, error)
    message = f"queued run {run.id} ({run.planned_attempts} attempts); a worker executes it"
    return _done(request, ActionResult(ok=True, message=message, run_id=run.id), f"/runs/{run.id}")


def _refuse_unsandboxed(state: State, asked: bool) -> None:
    """Running code on the host (`--sandbox none --allow-unsandboxed`) is queued from the web only
    when the server was started with `--allow-unsandboxed`."""
    if asked and not state.config.allow_unsandboxed:
        raise ActionRefused(
            "refused: this server does not queue runs without a sandbox (the agent's code would "
            "run on this host); start it with `benchyard serve --allow-unsandboxed` to allow it"
        )


def _recorded_unsandboxed(run: RunRecord) -> bool:
    return bool((run.settings or {}).get("allow_unsandboxed"))


def _positive_int(text: str, name: str) -> int | None:
    if not text.strip():
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise ActionRefused(f"{name}: '{text}' is not a positive whole number")
    return int(text)


def _positive_float(text: str, name: str) -> float | None:
    if not text.strip():
        return None
    try:
        value = float(text)
    except ValueError:
        raise ActionRefused(f"{name}: '{text}' is not a number of seconds") from None
    if value <= 0:
        raise ActionRefused(f"{name}: give a number of seconds above 0")
    return value


@page(actions, "/runs/{run_ref}/cancel", methods=("POST",))
def cancel(request: Request, state: State, run_ref: str) -> Response:
    try:
        run = state.store.resolve_run(run_ref)
        message = cancel_run(state.store, run, f"{host_name()}")
    except BenchyardError as error:
        return _refused(request, state, error)
    return _done(request, ActionResult(ok=True, message=message, run_id=run.id), f"/runs/{run.id}")


@page(actions, "/runs/{run_ref}/rerun", methods=("POST",))
def rerun(request: Request, state: State, run_ref: str) -> Response:
    """Queue a run of the failed, errored and timed-out attempts, linked to this one."""
    try:
        parent = state.store.resolve_run(run_ref)
        _refuse_unsandboxed(state, _recorded_unsandboxed(parent))
        run = enqueue_rerun(state.store, parent, state.workdir)
    except BenchyardError as error:
        return _refused(request, state, error)
    message = f"queued run {run.id}: {run.planned_attempts} attempts of run {parent.id[:8]} again"
    return _done(request, ActionResult(ok=True, message=message, run_id=run.id), f"/runs/{run.id}")


@page(actions, "/runs/{run_ref}/rescore", methods=("POST",))
def rescore(request: Request, state: State, run_ref: str) -> Response:
    """Grade the run's recorded outputs again (`benchyard rescore`), in a process of its own."""
    try:
        run = state.store.resolve_run(run_ref)
        _refuse_unsandboxed(state, _recorded_unsandboxed(run))
        since = time.time()
        log = start_rescore(state.store, run, state.workdir)
    except BenchyardError as error:
        return _refused(request, state, error)
    new = _rescore_of(state, run.id, since)
    deadline = time.monotonic() + RESCORE_WAIT_SEC
    while new is None and time.monotonic() < deadline:
        time.sleep(0.1)
        new = _rescore_of(state, run.id, since)
    message = _rescoring_message(run.id, new)
    if new is None:
        message += f"; its output goes to {Path(log).name}"
    result = ActionResult(ok=True, message=message, run_id=new.id if new else None)
    return _done(request, result, f"/queue?rescoring={run.id}&since={since:.6f}")
