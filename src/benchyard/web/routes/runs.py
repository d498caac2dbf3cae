"""The runs: the list with its filters, one run's page with its attempts table, its live progress
and its full report."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Annotated

from anyio import to_thread
from fastapi import APIRouter, Depends, HTTPException, Query
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from benchyard.report.build import build_report
from benchyard.report.listing import iter_strict_json
from benchyard.report.stats import wilson_interval
from benchyard.store import search
from benchyard.store.browse import (
    FLAG_KINDS,
    RUN_SORT_KEYS,
    SORT_KEYS,
    AttemptQuery,
    RunFilter,
    attempt_page,
    flaky_among,
    list_runs,
    run_choices,
    run_progress,
)
from benchyard.store.queue import Queue
from benchyard.store.records import RunRecord
from benchyard.web.drawer import attempt_detail
from benchyard.web.models import (
    AttemptDetail,
    AttemptFilterForm,
    AttemptTable,
    CategoryRow,
    CheckRow,
    Paging,
    Progress,
    RunFilterForm,
    RunHeader,
    RunPage,
    RunsPage,
)
from benchyard.web.overview import RunFigures
from benchyard.web.routing import page
from benchyard.web.rows import ACTIVE, attempt_row, is_subset, run_rows
from benchyard.web.state import AppState, app_state

router = APIRouter()
State = Annotated[AppState, Depends(app_state)]
FAILURES_SHOWN = 10
VERDICTS = ("passed", "failed", "timeout", "error")
FAILURE_VERDICTS = ("failed", "timeout", "error")
EVENT_INTERVAL_SEC = 1.0


@page(router, "/runs")
def runs_page(
    request: Request,
    state: State,
    benchmark: str = "",
    version: str = "",
    agent: str = "",
    commit: str = "",
    status: str = "",
    since: str = "",
    until: str = "",
    run: Annotated[list[str] | None, Query()] = None,
    sort: str = "started",
    order: str = "desc",
    page_number: Annotated[int, Query(alias="page", ge=1)] = 1,
    per_page: Annotated[int, Query(ge=1, le=500)] = 50,
) -> Response:
    if sort not in RUN_SORT_KEYS:
        raise HTTPException(400, f"sort: '{sort}' is not one of {', '.join(RUN_SORT_KEYS)}")
    if order not in ("asc", "desc"):
        raise HTTPException(400, "order: asc or desc")
    form = RunFilterForm(
        sort=sort,
        order=order,
        benchmark=benchmark,
        version=version,
        agent=agent,
        commit=commit,
        status=status,
        since=since,
        until=until,
    )
    where = RunFilter(
        benchmark=benchmark or None,
        version=version or None,
        agent=agent or None,
        commit=commit or None,
        status=status or None,
        since=_day(since, "since"),
        until=_day(until, "until", after=True),
        ids=tuple(run or ()),
    )
    runs, total = list_runs(
        state.store,
        where,
        limit=per_page,
        offset=(page_number - 1) * per_page,
        sort=sort,
        descending=order == "desc",
    )
    choices = run_choices(state.store)
    listing = RunsPage(
        filters=form,
        benchmarks=choices.benchmarks,
        agents=choices.agents,
        statuses=choices.statuses,
        rows=run_rows(state.store, runs),
        paging=Paging(page=page_number, per_page=per_page, total=total),
    )
    return state.renderer.respond(request, "runs.html", listing)


def _day(text: str, name: str, *, after: bool = False) -> datetime | None:
    if not text:
        return None
    try:
        day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise HTTPException(400, f"{name}: '{text}' is not a date (YYYY-MM-DD)") from None
    return day + timedelta(days=1) if after else day


@page(router, "/runs/{run_ref}")
def run_page(
    request: Request,
    state: State,
    run_ref: str,
    verdict: Annotated[list[str] | None, Query()] = None,
    category: str = "",
    flag: str = "",
    check: str = "",
    check_outcome: str = "",
    scenario: str = "",
    q: str = "",
    sort: str = "scenario",
    order: str = "asc",
    page_number: Annotated[int, Query(alias="page", ge=1)] = 1,
    per_page: Annotated[int, Query(ge=1, le=500)] = 50,
    attempt: str = "",
    merged: bool = False,
) -> Response:
    """`merged=true` on a rerun: the figures of the run merged with the runs it re-ran, as
    `benchyard report --merged` (the attempts table stays the rerun's own)."""
    run = state.store.resolve_run(run_ref)
    figures = state.figures.figures(state.store, run)
    merged = merged and bool(run.parent_run_id) and run.status not in ACTIVE
    report = build_report(state.store, run, merged=True) if merged else None
    filters = _attempt_filters(
        verdict or [], category, flag, check, check_outcome, scenario, sort, order, per_page
    ).model_copy(update={"q": q.strip()})
    table = _attempt_table(state, run, figures, filters, page_number)
    active = run.status in ACTIVE
    failures = attempt_page(
        state.store,
        run.id,
        AttemptQuery(verdicts=FAILURE_VERDICTS, limit=FAILURES_SHOWN),
        median_turns=figures.median_turns,
        total=None if active else figures.summary.attempt_count - figures.summary.passed,
    )
    detail = (
        _with_neighbours(
            attempt_detail(state.store, state.catalog, attempt, median_turns=figures.median_turns),
            [row.id for row in table.rows],
        )
        if attempt
        else None
    )
    categories = report.categories if report else figures.categories
    checks = report.checks if report else figures.checks
    shown = RunPage(
        run=_header(state, run),
        progress=progress_of(state, run, figures),
        summary=report.summary if report else figures.summary,
        categories=[
            CategoryRow(
                category=name,
                **counts.model_dump(exclude={"accuracy_ci95"}),
                accuracy_ci95=wilson_interval(counts.passed, counts.counted),
            )
            for name, counts in categories.items()
        ],
        checks=[
            CheckRow(
                check_type=name,
                **counts.model_dump(exclude={"pass_rate_ci95"}),
                pass_rate_ci95=wilson_interval(counts.passed, counts.total),
            )
            for name, counts in checks.items()
        ],
        flags=figures.flags,
        failures=[attempt_row(a, median_turns=figures.median_turns) for a in failures.rows],
        failure_total=failures.total,
        attempts=table,
        drawer=detail,
        merged=report is not None,
        merged_runs=report.run.merged_runs if report else [],
        can_cancel=active,
        can_rerun=not active and failures.total > 0,
        can_rescore=not active,
    )
    return state.renderer.respond(request, "run.html", shown)


def _with_neighbours(detail: AttemptDetail, shown: list[str]) -> AttemptDetail:
    """The drawer with the attempts before and after it in the table shown beside it."""
    if detail.attempt.id not in shown:
        return detail
    at = shown.index(detail.attempt.id)
    return detail.model_copy(
        update={
            "previous_id": shown[at - 1] if at > 0 else None,
            "next_id": shown[at + 1] if at + 1 < len(shown) else None,
        }
    )


def _attempt_filters(
    verdicts: list[str],
    category: str,
    flag: str,
    check: str,
    check_outcome: str,
    scenario: str,
    sort: str,
    order: str,
    per_page: int,
) -> AttemptFilterForm:
    unknown = [v for v in verdicts if v not in VERDICTS]
    if unknown:
        raise HTTPException(400, f"verdict: '{unknown[0]}' is not one of {', '.join(VERDICTS)}")
    if flag and flag not in (*FLAG_KINDS, "any"):
        raise HTTPException(400, f"flag: '{flag}' is not one of any, {', '.join(FLAG_KINDS)}")
    if sort not in SORT_KEYS:
        raise HTTPException(400, f"sort: '{sort}' is not one of {', '.join(SORT_KEYS)}")
    if order not in ("asc", "desc"):
        raise HTTPException(400, "order: asc or desc")
    if check_outcome not in ("", "passed", "failed"):
        raise HTTPException(400, "check_outcome: passed or failed")
    return AttemptFilterForm(
        verdict=verdicts,
        category=category,
        flag=flag,
        check=check,
        check_outcome=check_outcome,
        scenario=scenario,
        sort=sort,
        order=order,
        per_page=per_page,
    )


def _attempt_table(
    state: AppState, run: RunRecord, figures: RunFigures, form: AttemptFilterForm, page_number: int
) -> AttemptTable:
    query = AttemptQuery(
        verdicts=tuple(form.verdict),
        category=form.category or None,
        flag=form.flag or None,
        check=form.check or None,
        check_outcome=form.check_outcome or None,  # type: ignore[arg-type]
        scenario=form.scenario or None,
        search=form.q or None,
        sort=form.sort,  # type: ignore[arg-type]
        descending=form.order == "desc",
        limit=form.per_page,
        offset=(page_number - 1) * form.per_page,
    )
    if form.q:
        search.parse(form.q)  # refused before anything is indexed
        search.ensure_indexed(state.store, run.id)
    known_total = _known_total(run, figures, form)
    found = attempt_page(
        state.store, run.id, query, median_turns=figures.median_turns, total=known_total
    )
    flaky = (
        flaky_among(state.store, run.id, [a.scenario_id for a in found.rows])
        if figures.flags.get("flaky")
        else set()
    )
    return AttemptTable(
        filters=form,
        rows=[
            attempt_row(a, median_turns=figures.median_turns, flaky=a.scenario_id in flaky)
            for a in found.rows
        ],
        paging=Paging(page=page_number, per_page=form.per_page, total=found.total),
        categories=list(figures.categories),
        check_types=list(figures.checks),
        flag_kinds=list(FLAG_KINDS),
        sort_keys=list(SORT_KEYS),
    )


def _known_total(run: RunRecord, figures: RunFigures, form: AttemptFilterForm) -> int | None:
    """How many attempts the table's query matches, when the run's figures already say (a run
    that ended, unfiltered or filtered by verdict or category only); None: count them."""
    if run.status in ACTIVE or form.flag or form.check or form.scenario or form.q:
        return None
    summary = figures.summary
    by_verdict = {
        "passed": summary.passed,
        "failed": summary.failed,
        "timeout": summary.timeouts,
        "error": summary.errors,
    }
    if form.category:
        if form.category not in figures.categories:
            return 0
        counts = figures.categories[form.category]
        by_verdict = {
            "passed": counts.passed,
            "failed": counts.counted - counts.passed - counts.timeouts,
            "timeout": counts.timeouts,
            "error": counts.errors,
        }
    return sum(by_verdict[v] for v in (form.verdict or VERDICTS))


def _header(state: AppState, run: RunRecord) -> RunHeader:
    from benchyard.report.model import Resume

    resumes = [
        Resume(**{k: v for k, v in vars(r).items() if k != "run_id"})
        for r in Queue(state.store).resumes(run.id)
    ]
    return RunHeader(
        id=run.id,
        status=run.status,
        status_reason=run.status_reason,
        benchmark=run.benchmark_name,
        version=run.benchmark_version,
        benchmark_hash=run.benchmark_hash,
        benchmark_path=run.benchmark_path,
        agent=run.agent_name,
        agent_config=run.agent_config,
        commit=run.agent_commit,
        dirty=run.agent_dirty,
        repo=run.agent_repo,
        settings=run.settings,
        benchyard_version=run.benchyard_version,
        host=run.host,
        started_at=run.started_at,
        finished_at=run.finished_at,
        parent_run_id=run.parent_run_id,
        rescored_from=run.rescored_from,
        planned=run.planned_attempts,
        subset=is_subset(run),
        resumes=resumes,
    )


def progress_of(state: AppState, run: RunRecord, figures: RunFigures | None = None) -> Progress:
    """Where the run stands: read from the queue while it is active, else its figures say."""
    if figures is not None and run.status not in ACTIVE:
        summary = figures.summary
        return Progress(
            run_id=run.id,
            status=run.status,
            active=False,
            planned=run.planned_attempts,
            finished=summary.attempt_count,
            queued=0,
            claimed=0,
            cancelled=max(0, run.planned_attempts - summary.attempt_count),
            passed=summary.passed,
            failed=summary.failed,
            errors=summary.errors,
            timeouts=summary.timeouts,
        )
    now = run_progress(state.store, run)
    return Progress(
        run_id=run.id,
        status=now.status,
        active=now.status in ACTIVE,
        planned=now.planned,
        finished=now.finished,
        queued=now.queued,
        claimed=now.claimed,
        cancelled=now.cancelled,
        passed=now.verdicts.get("passed", 0),
        failed=now.verdicts.get("failed", 0),
        errors=now.verdicts.get("error", 0),
        timeouts=now.verdicts.get("timeout", 0),
        stuck=now.stuck,
    )


@page(router, "/runs/{run_ref}/progress")
def run_progress_page(request: Request, state: State, run_ref: str) -> Response:
    """Where the run stands now (for polling; /runs/RUN/events streams it)."""
    run = state.store.resolve_run(run_ref)
    return JSONResponse(progress_of(state, run).model_dump(mode="json"))


@router.get("/runs/{run_ref}/events")
async def run_events(request: Request, run_ref: str) -> StreamingResponse:
    """Server-sent events: `progress` each time the run's progress changes, `end` once it ends."""
    state: AppState = request.app.state.benchyard
    run = await to_thread.run_sync(state.store.resolve_run, run_ref)

    async def stream() -> AsyncIterator[str]:
        last = ""
        while True:
            progress = await to_thread.run_sync(progress_of, state, run)
            payload = progress.model_dump_json()
            if payload != last:
                yield f"event: progress\ndata: {payload}\n\n"
                last = payload
            if not progress.active:
                yield "event: end\ndata: {}\n\n"
                return
            if await request.is_disconnected():
                return
            await asyncio.sleep(EVENT_INTERVAL_SEC)

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"cache-control": "no-store"}
    )


@router.get("/api/runs/{run_ref}/report", response_class=StreamingResponse)
def run_report(state: State, run_ref: str, merged: bool = False) -> StreamingResponse:
    """The run's report, as `benchyard report RUN --format json` writes it (the same function
    writes it), streamed as it is written: a 100,000-attempt report is never whole in memory."""
    run = state.store.resolve_run(run_ref)
    payload = build_report(state.store, run, merged=merged).model_dump(mode="json")
    return StreamingResponse(_pieces(iter_strict_json(payload)), media_type="application/json")


def _pieces(text: Iterator[str], size: int = 1 << 16) -> Iterator[bytes]:
    """The text in pieces of about `size` characters (the encoder's own are a few bytes each)."""
    pending: list[str] = []
    length = 0
    for piece in text:
        pending.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(pending).encode()
            pending, length = [], 0
    if pending:
        yield "".join(pending).encode()
