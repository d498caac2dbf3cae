"""Proposals of benchmark changes (read, accept, reject) and the automation page (schedules and
webhook deliveries). Deciding goes through automation/proposals.py, as `benchyard proposals
accept|reject` does; `--read-only` serves no route that decides. The proposal to decide is a form
field, not part of the path."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from anyio import to_thread
from fastapi import APIRouter, Depends, Form, Query
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from benchyard.automation import proposals as library
from benchyard.automation import schedules, webhooks
from benchyard.errors import BenchyardError
from benchyard.web.access import wants_json
from benchyard.web.automation_models import (
    AutomationPage,
    DeliveryView,
    FiringView,
    ProposalFile,
    ProposalPage,
    ProposalRow,
    ProposalsPage,
    ScheduleView,
    TryView,
    WebhookView,
)
from benchyard.web.csrf import csrf_guard
from benchyard.web.drawer import diff_lines
from benchyard.web.models import ActionResult, Paging
from benchyard.web.routing import page
from benchyard.web.state import AppState, app_state

router = APIRouter()
actions = APIRouter(dependencies=[Depends(csrf_guard)])
State = Annotated[AppState, Depends(app_state)]
MAX_SHOWN = 200
DELIVERIES_PER_PAGE = 50


def _row(proposal: library.Proposal) -> ProposalRow:
    return ProposalRow(
        id=proposal.id,
        kind=proposal.kind,
        status=proposal.status,
        benchmark=proposal.benchmark_name,
        title=proposal.title,
        created_by=proposal.created_by,
        created_at=proposal.created_at,
        decided_by=proposal.decided_by,
        decided_at=proposal.decided_at,
        added=proposal.summary.get("added", []),
        changed=proposal.summary.get("changed", []),
        removed=proposal.summary.get("removed", []),
    )


@page(router, "/proposals")
def proposals_page(request: Request, state: State, status: str = "pending") -> Response:
    """Proposals (`status`: pending, accepted, rejected or all), newest first."""
    shown = None if status == "all" else status
    found = library.list_proposals(state.store, shown, MAX_SHOWN)
    result = ProposalsPage(proposals=[_row(p) for p in found], status=shown)
    return state.renderer.respond(request, "proposals.html", result)


@page(router, "/proposals/{proposal_id}")
def proposal_page(request: Request, state: State, proposal_id: str, done: str = "") -> Response:
    proposal = library.get_proposal(state.store, proposal_id)
    message = {"accepted": "accepted: the files are written", "rejected": "rejected"}.get(done)
    return state.renderer.respond(request, "proposal.html", _detail(proposal, message))


def _detail(proposal: library.Proposal, message: str | None = None) -> ProposalPage:
    files = [
        ProposalFile(
            path=change.path,
            change="added"
            if change.before is None
            else "removed"
            if change.after is None
            else "changed",
            lines=diff_lines(change.diff()),
        )
        for change in proposal.changes
    ]
    return ProposalPage(
        proposal=_row(proposal),
        benchmark_root=proposal.benchmark_root,
        rationale=proposal.rationale,
        decision_note=proposal.decision_note,
        result_hash=proposal.result_hash,
        files=files,
        message=message,
    )


async def _decide(request: Request, decision: str, proposal: str, by: str, note: str) -> Response:
    state: AppState = request.app.state.benchyard
    who = by.strip()[:100] or "someone"
    decider = f"{who} (web UI)"
    decide = library.accept if decision == "accept" else library.reject

    def run() -> library.Proposal:
        return decide(state.store, proposal, by=decider, note=note.strip() or None)

    try:
        decided = await to_thread.run_sync(run)
    except BenchyardError as error:
        result = ActionResult(ok=False, message=str(error))
        if wants_json(request):
            return JSONResponse(result.model_dump(mode="json"), status_code=400)
        try:
            shown = _detail(library.get_proposal(state.store, proposal), f"refused: {error}")
        except BenchyardError:
            return state.renderer.respond(request, "proposals.html", _listing(state), 400)
        return state.renderer.respond(request, "proposal.html", shown, status_code=400)
    if wants_json(request):
        message = f"proposal {decided.id[:8]} {decided.status}"
        return JSONResponse(ActionResult(ok=True, message=message).model_dump(mode="json"))
    target = f"/proposals/{quote(decided.id)}?done={decided.status}"
    return RedirectResponse(target, status_code=303)


def _listing(state: AppState) -> ProposalsPage:
    found = library.list_proposals(state.store, "pending", MAX_SHOWN)
    return ProposalsPage(proposals=[_row(p) for p in found], status="pending")


@page(actions, "/proposals/accept", methods=("POST",))
async def accept(
    request: Request,
    proposal: Annotated[str, Form()],
    by: Annotated[str, Form()] = "",
    note: Annotated[str, Form()] = "",
) -> Response:
    """Write a pending proposal's files (checked again first), as `benchyard proposals accept`."""
    return await _decide(request, "accept", proposal, by, note)


@page(actions, "/proposals/reject", methods=("POST",))
async def reject(
    request: Request,
    proposal: Annotated[str, Form()],
    by: Annotated[str, Form()] = "",
    note: Annotated[str, Form()] = "",
) -> Response:
    """Refuse a pending proposal, as `benchyard proposals reject`."""
    return await _decide(request, "reject", proposal, by, note)


@page(router, "/automation")
def automation_page(
    request: Request,
    state: State,
    page_number: Annotated[int, Query(alias="page", ge=1)] = 1,
) -> Response:
    """Schedules with their latest firings; the webhooks of benchyard.yaml; deliveries, newest
    first, each try with its status and response."""
    store = state.store
    offset = (page_number - 1) * DELIVERIES_PER_PAGE
    found = webhooks.list_deliveries(store, DELIVERIES_PER_PAGE, offset=offset)
    tries = webhooks.tries_of(store, [d.id for d in found])
    result = AutomationPage(
        schedules=[
            ScheduleView(
                id=s.id,
                benchmark=s.benchmark,
                agent=s.agent_name,
                cron=s.cron,
                missed=s.missed,
                next_due_at=s.next_due_at,
                firings=[
                    FiringView(
                        due_at=f.due_at,
                        action=f.action,
                        missed=f.missed,
                        run_id=f.run_id,
                        baseline_run_id=f.baseline_run_id,
                        regression=f.regression,
                        detail=f.detail,
                    )
                    for f in schedules.firings(store, s.id, 5)
                ],
            )
            for s in schedules.list_schedules(store)
        ],
        webhooks=[
            WebhookView(
                name=name,
                url=hook.shown_url(),
                events=list(hook.events),
                benchmarks=hook.benchmarks,
            )
            for name, hook in sorted(state.config.project.webhooks.items())
        ],
        deliveries=[
            DeliveryView(
                **{k: v for k, v in vars(d).items()},
                try_log=[
                    TryView(**{k: v for k, v in vars(t).items() if k != "delivery_id"})
                    for t in tries.get(d.id, [])
                ],
            )
            for d in found
        ],
        paging=Paging(
            page=page_number, per_page=DELIVERIES_PER_PAGE, total=webhooks.count_deliveries(store)
        ),
    )
    return state.renderer.respond(request, "automation.html", result)
