"""One attempt: the scenario drawer (a page of its own, a fragment for the run page, or JSON) and
its artifacts as plain text, read from the store only."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

from benchyard.store.browse import attempt_run_id, attempt_tries
from benchyard.web.access import wants_json
from benchyard.web.drawer import attempt_detail
from benchyard.web.routing import page
from benchyard.web.state import AppState, app_state

router = APIRouter()
State = Annotated[AppState, Depends(app_state)]
ARTIFACTS = ("answer", "stdout", "stderr", "patch", "trajectory")


@page(router, "/attempts/{attempt_id}")
def attempt_page(
    request: Request, state: State, attempt_id: str, fragment: bool = False
) -> Response:
    """The drawer of one try: `?fragment=1` gives only the drawer's HTML (the run page's script
    puts it beside the attempts table)."""
    run = state.store.get_run(attempt_run_id(state.store, attempt_id))
    median = state.figures.figures(state.store, run).median_turns
    detail = attempt_detail(state.store, state.catalog, attempt_id, median_turns=median)
    if fragment and not wants_json(request):
        return HTMLResponse(state.renderer.html(request, "drawer_fragment.html", detail))
    return state.renderer.respond(request, "attempt.html", detail)


@router.get("/attempts/{attempt_id}/{artifact}")
def attempt_artifact(state: State, attempt_id: str, artifact: str) -> Response:
    """One piece of evidence of a try, as text: answer, stdout, stderr, patch or trajectory (JSON).
    Only these names: an artifact comes from the store, never from a path."""
    if artifact not in ARTIFACTS:
        raise HTTPException(404, f"no artifact '{artifact}' (one of {', '.join(ARTIFACTS)})")
    shown = next(t for t in attempt_tries(state.store, attempt_id) if t.id == attempt_id)
    if artifact == "trajectory":
        events = [event.to_dict() for event in shown.trajectory or []]
        return PlainTextResponse(
            json.dumps(events, indent=2, ensure_ascii=False), media_type="application/json"
        )
    text = {
        "answer": shown.answer,
        "stdout": shown.stdout,
        "stderr": shown.stderr,
        "patch": shown.patch,
    }
    return PlainTextResponse(text[artifact] or "", media_type="text/plain; charset=utf-8")
