"""Comparing runs (report/compare.py): with two, the flips first, the paired interval, McNemar,
per-category deltas and the change in errors; with more, a scenario x run grid of verdicts that
keeps to the rows that differ."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.requests import Request
from starlette.responses import Response

from benchyard.errors import BenchyardError
from benchyard.report.compare import compare_runs
from benchyard.store.browse import RunFilter, list_runs
from benchyard.web.models import ComparePage, GridRow
from benchyard.web.routing import page
from benchyard.web.rows import run_rows
from benchyard.web.state import AppState, app_state

router = APIRouter()
State = Annotated[AppState, Depends(app_state)]
CHOICES = 100
GRID_ROWS = 2_000


@page(router, "/compare")
def compare_page(
    request: Request,
    state: State,
    run: Annotated[list[str] | None, Query()] = None,
    differ_only: bool = True,
    allow_mismatch: bool = False,
    alpha: Annotated[float, Query(gt=0, lt=1)] = 0.05,
) -> Response:
    references = [ref for ref in (run or []) if ref]
    recent, _ = list_runs(state.store, RunFilter(), limit=CHOICES)
    shown = ComparePage(
        run_ids=references,
        runs=[],
        choices=run_rows(state.store, recent),
        comparison=None,
        grid=[],
        grid_total=0,
        differ_only=differ_only,
        allow_mismatch=allow_mismatch,
        error=None,
    )
    if len(references) == 1:
        shown.error = "pick a second run to compare with the first (the baseline)"
    if len(references) >= 2:
        try:
            runs = [state.store.resolve_run(ref) for ref in references]
            comparison = compare_runs(  # the page's one box allows both: it shows each scope
                state.store,
                runs,
                alpha=alpha,
                allow_version_mismatch=allow_mismatch,
                allow_partial=allow_mismatch,
            )
        except BenchyardError as error:
            shown.error = str(error)
        else:
            rows = [
                GridRow(
                    scenario_id=row.scenario_id,
                    epoch=row.epoch,
                    category=row.category,
                    verdicts=row.verdicts,
                    differs=len(set(row.verdicts)) > 1,
                )
                for row in comparison.scenarios
            ]
            kept = [row for row in rows if row.differs or not differ_only]
            shown.run_ids = [r.id for r in runs]
            shown.runs = run_rows(state.store, runs)
            shown.comparison = comparison
            shown.grid = kept[:GRID_ROWS]
            shown.grid_total = len(kept)
            if comparison.candidates:
                shown.categories = comparison.candidates[0].categories
    return state.renderer.respond(request, "compare.html", shown)
