"""Runs next to each other, as promptfoo's matrix: one scenario's answers, checks and trajectories
from 2 or 3 runs side by side; a run's final try of a scenario found from a compare row; and runs
ticked on a list taken to the comparison, the oldest as its baseline."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, HTTPException, Query
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from benchyard.store.browse import final_attempt_id
from benchyard.web.drawer import attempt_detail
from benchyard.web.models import SideColumn, SidePage
from benchyard.web.routing import page
from benchyard.web.rows import run_rows
from benchyard.web.state import AppState, app_state

router = APIRouter()
State = Annotated[AppState, Depends(app_state)]
MOST_SIDE = 3


@page(router, "/compare/side")
def side_page(
    request: Request,
    state: State,
    runs: str = "",
    scenario: str = "",
    epoch: Annotated[int, Query(ge=1)] = 1,
) -> Response:
    """`runs=A,B[,C]&scenario=ID[&epoch=N]`: that epoch's final try in each run, side by side."""
    references = [ref.strip() for ref in runs.split(",") if ref.strip()]
    if not 2 <= len(references) <= MOST_SIDE:
        raise HTTPException(400, "runs: two or three runs, separated by commas (runs=A,B)")
    if not scenario:
        raise HTTPException(400, "scenario: the id of the scenario to show")
    records = [state.store.resolve_run(ref) for ref in references]
    columns = []
    for run, row in zip(records, run_rows(state.store, records), strict=True):
        found = final_attempt_id(state.store, run.id, scenario, epoch)
        median = state.figures.figures(state.store, run).median_turns
        detail = (
            attempt_detail(state.store, state.catalog, found, median_turns=median)
            if found
            else None
        )
        columns.append(SideColumn(run=row, detail=detail))
    shown = SidePage(scenario_id=scenario, epoch=epoch, columns=columns)
    return state.renderer.respond(request, "side.html", shown)


@router.get("/compare/attempt", include_in_schema=False)
def compare_attempt(
    state: State, run: str, scenario: str, epoch: Annotated[int, Query(ge=1)] = 1
) -> Response:
    """A compare row's cell: the run's page with the drawer of that scenario's final try."""
    record = state.store.resolve_run(run)
    found = final_attempt_id(state.store, record.id, scenario, epoch)
    if found is None:
        raise HTTPException(
            404, f"run {record.id[:8]} has no attempt of '{scenario}' epoch {epoch}"
        )
    return RedirectResponse(f"/runs/{quote(record.id)}?attempt={quote(found)}#drawer", 303)


@router.get("/compare/pick", include_in_schema=False)
def compare_pick(state: State, run: Annotated[list[str] | None, Query()] = None) -> Response:
    """Runs ticked on a list (newest first there): the comparison, the oldest as its baseline."""
    picked = [state.store.resolve_run(ref) for ref in run or [] if ref]
    ordered = sorted(picked, key=lambda record: (record.started_at, record.id))
    return RedirectResponse("/compare?" + urlencode([("run", r.id) for r in ordered]), 303)
