"""Editing a scenario of a benchmark on disk (web/editor.py): one text box per field, each
problem the loader finds shown at its field, the file written back only when none is left."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from anyio import to_thread
from fastapi import APIRouter, Depends, HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from benchyard.spec.loader import Benchmark
from benchyard.web.access import wants_json
from benchyard.web.csrf import csrf_guard
from benchyard.web.editor import (
    EditOutcome,
    EditRefused,
    FieldProblem,
    save_scenario,
    scenario_text,
)
from benchyard.web.models import EditPage, FieldEditor, FieldProblemView
from benchyard.web.routing import page
from benchyard.web.state import AppState, app_state

router = APIRouter()
actions = APIRouter(dependencies=[Depends(csrf_guard)])
State = Annotated[AppState, Depends(app_state)]
FIELD_PREFIX = "field:"


def _editable(state: AppState, name: str) -> Benchmark:
    known = state.benchmark(name)
    if known is None:
        raise HTTPException(404, f"no benchmark '{name}' on disk")
    if not known.editable:
        raise HTTPException(403, f"'{name}' is built into benchyard: copy it to edit it")
    loaded = state.catalog.load(known.path)
    if loaded.benchmark is None:
        raise HTTPException(
            409, f"'{name}' does not load, so it cannot be edited here: {loaded.problem}"
        )
    return loaded.benchmark


@page(router, "/benchmarks/{name}/scenarios/{scenario_id}/edit")
def edit_page(request: Request, state: State, name: str, scenario_id: str) -> Response:
    benchmark = _editable(state, name)
    try:
        source = scenario_text(benchmark, scenario_id)
    except EditRefused as refused:
        raise HTTPException(409, str(refused)) from None
    shown = EditPage(
        benchmark=name,
        scenario_id=scenario_id,
        file=source.file.relative_to(benchmark.root).as_posix(),
        file_sha256=source.file_sha256,
        fields=[FieldEditor(name=f.name, text=f.text, problems=[]) for f in source.fields],
    )
    return state.renderer.respond(request, "edit.html", shown)


@page(actions, "/benchmarks/{name}/scenarios/{scenario_id}/edit", methods=("POST",))
async def save_edit(request: Request, name: str, scenario_id: str) -> Response:
    """Fields come as `field:NAME` (an empty one removes the field), a new one as `new_name` and
    `new_value`, with `file_sha256` of the file the form was made from."""
    state: AppState = request.app.state.benchyard
    form = await request.form()
    edits = {
        key[len(FIELD_PREFIX) :]: str(value)
        for key, value in form.multi_items()
        if key.startswith(FIELD_PREFIX) and isinstance(value, str)
    }
    new_name, new_value = str(form.get("new_name") or "").strip(), str(form.get("new_value") or "")
    sha = str(form.get("file_sha256") or "")

    def save() -> tuple[Benchmark, EditOutcome]:
        benchmark = _editable(state, name)
        return benchmark, save_scenario(
            benchmark,
            scenario_id,
            edits,
            file_sha256=sha,
            new_field=(new_name, new_value) if new_name else None,
        )

    try:
        benchmark, outcome = await to_thread.run_sync(save)
    except EditRefused as refused:
        return _answer(
            request, state, _page(name, scenario_id, "", sha, edits, [], error=str(refused)), 409
        )
    if outcome.saved:
        if wants_json(request):
            return JSONResponse({"ok": True, "scenario_id": outcome.scenario_id})
        target = f"/benchmarks/{quote(name)}?saved={quote(outcome.scenario_id)}"
        return RedirectResponse(target, status_code=303)
    file = benchmark.locations[scenario_id].file.relative_to(benchmark.root).as_posix()
    shown = _page(name, scenario_id, file, sha, edits, outcome.problems, new=(new_name, new_value))
    return _answer(request, state, shown, 422)


def _page(
    name: str,
    scenario_id: str,
    file: str,
    sha: str,
    edits: dict[str, str],
    problems: list[FieldProblem],
    *,
    new: tuple[str, str] = ("", ""),
    error: str | None = None,
) -> EditPage:
    """The form again, as the user sent it, each problem under its field."""

    def at(field: str) -> list[FieldProblemView]:
        return [
            FieldProblemView(path=p.path, line=p.line, line_of=p.line_of, message=p.message)
            for p in problems
            if p.field == field
        ]

    named = {*edits, *([new[0]] if new[0] else [])}
    return EditPage(
        benchmark=name,
        scenario_id=scenario_id,
        file=file,
        file_sha256=sha,
        fields=[FieldEditor(name=key, text=text, problems=at(key)) for key, text in edits.items()],
        new_field_name=new[0],
        new_field_text=new[1],
        new_field_problems=at(new[0]) if new[0] and new[0] not in edits else [],
        problems=[
            FieldProblemView(path=p.path, line=p.line, line_of=p.line_of, message=p.message)
            for p in problems
            if p.field not in named
        ],
        error=error,
    )


def _answer(request: Request, state: AppState, shown: EditPage, status: int) -> Response:
    return state.renderer.respond(request, "edit.html", shown, status_code=status)
