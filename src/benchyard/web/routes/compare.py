"""Comparing runs (report/compare.py): with two, the flips first, the paired interval, McNemar,
per-category deltas and the change in errors; with more, a scenario x run grid of verdicts. The
grid is paged and filtered on the server (web/compare_grid.py): the rows that differ by default,
`show=regressions` or `show=all`, `page=` and `per_page=`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query
from starlette.requests import Request
from starlette.responses import Response

from benchyard.errors import BenchyardError
from benchyard.store.browse import RunFilter, list_runs
from benchyard.web.compare_grid import SHOWS, Show
from benchyard.web.models import ComparePage, Paging
from benchyard.web.routing import page
from benchyard.web.rows import run_rows
from benchyard.web.state import AppState, app_state

router = APIRouter()
State = Annotated[AppState, Depends(app_state)]
CHOICES = 100
GRID_ROWS = 100


@page(router, "/compare")
def compare_page(
    request: Request,
    state: State,
    run: Annotated[list[str] | None, Query()] = None,
    show: str = "",
    differ_only: bool = True,
    allow_mismatch: bool = False,
    alpha: Annotated[float, Query(gt=0, lt=1)] = 0.05,
    page_number: Annotated[int, Query(alias="page", ge=1)] = 1,
    per_page: Annotated[int, Query(ge=1, le=1000)] = GRID_ROWS,
) -> Response:
    """`differ_only=false` is `show=all` (its older name)."""
    shown_rows = _show(show, differ_only)
    references = [ref for ref in (run or []) if ref]
    recent, _ = list_runs(state.store, RunFilter(), limit=CHOICES)
    shown = ComparePage(
        run_ids=references,
        runs=[],
        choices=run_rows(state.store, recent),
        comparison=None,
        grid=[],
        grid_total=0,
        paging=None,
        show=shown_rows,
        differ_only=shown_rows != "all",
        allow_mismatch=allow_mismatch,
        error=None,
    )
    if len(references) == 1:
        shown.error = "pick a second run to compare with the first (the baseline)"
    if len(references) >= 2:
        try:
            runs = [state.store.resolve_run(ref) for ref in references]
            grid = state.grids.grid(state.store, runs, alpha=alpha, allow_mismatch=allow_mismatch)
        except BenchyardError as error:
            shown.error = str(error)
        else:
            comparison = grid.comparison
            paging = Paging(page=page_number, per_page=per_page, total=grid.total(shown_rows))
            offset = (page_number - 1) * per_page
            shown.run_ids = [r.id for r in runs]
            shown.runs = run_rows(state.store, runs)
            shown.comparison = comparison.model_copy(update={"scenarios": []})
            shown.grid = grid.page(state.store, runs[0], shown_rows, offset, per_page)
            shown.grid_total = paging.total
            shown.paging = paging
            if comparison.candidates:
                shown.categories = comparison.candidates[0].categories
    return state.renderer.respond(request, "compare.html", shown)


def _show(show: str, differ_only: bool) -> Show:
    if not show:
        return "changed" if differ_only else "all"
    for known in SHOWS:
        if show == known:
            return known
    raise HTTPException(400, f"show: '{show}' is not one of {', '.join(SHOWS)}")
