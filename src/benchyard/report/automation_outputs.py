"""What the subcommands of `proposals`, `schedule` and `webhooks` print with `--format json`: one
pydantic model each, with a `schema_version` and a schema file shipped in the package (see
report/output_schemas.py and docs/json-output.md), built here from benchyard.automation's records."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import Field

from benchyard.report.model import ReportModel
from benchyard.report.outputs import Output

if TYPE_CHECKING:
    from benchyard.automation.proposals import Proposal
    from benchyard.automation.schedules import Firing, Schedule
    from benchyard.automation.webhook_config import WebhookConfig
    from benchyard.automation.webhooks import Delivery, Try


class ProposalEntry(Output):
    """A proposal: `proposals list` prints an array of them (without `diff`), `proposals show`
    one (with it)."""

    id: str
    kind: str
    status: str = Field(description="pending, accepted or rejected.")
    benchmark: str
    title: str
    rationale: str
    summary: dict[str, Any] = Field(description="added, changed, removed (scenario ids), files.")
    created_at: datetime
    created_by: str
    decided_at: datetime | None
    decided_by: str | None
    decision_note: str | None
    diff: str | None = Field(default=None, description="A unified diff (show only).")


class ProposalDecided(Output):
    """`proposals accept` and `proposals reject`."""

    id: str
    status: str = Field(description="accepted or rejected.")
    benchmark_root: str
    written: list[str] = Field(description="The files written into the benchmark (accept only).")
    result_hash: str | None = Field(description="The benchmark's content hash after (accept).")


class FiringView(ReportModel):
    id: int
    schedule_id: str
    due_at: datetime
    handled_at: datetime
    action: str = Field(description="claimed, enqueued, skipped or refused.")
    missed: int
    run_id: str | None
    baseline_run_id: str | None
    regression: bool | None
    detail: str | None


class ScheduleEntry(Output):
    """A schedule: `schedule add` prints the one it added, `schedule list` an array."""

    id: str
    benchmark: str
    agent_name: str
    agent_repo: str | None
    settings: dict[str, Any]
    cron: str
    missed: str = Field(description="once or skip: what a firing no worker saw does.")
    grace_sec: float
    created_at: datetime
    created_by: str
    next_due_at: datetime
    firings: list[FiringView] = Field(description="The latest firings, newest first.")


class ScheduleRemoved(Output):
    id: str
    cron: str
    benchmark: str


class WebhookEntry(Output):
    """One webhook of benchyard.yaml (`webhooks list`: an array)."""

    name: str
    url: str = Field(description="Its address, credentials and a URL from a variable hidden.")
    events: list[str]
    benchmarks: list[str] | None = Field(description="Only these benchmarks' events; null: all.")
    secret_env: str
    max_tries: int


class TryView(ReportModel):
    delivery_id: str
    try_number: int
    at: datetime
    status_code: int | None
    response: str | None
    error: str | None
    duration_sec: float


class DeliveryEntry(Output):
    """One delivery with every try (`webhooks deliveries`: an array, newest first)."""

    id: str
    webhook: str
    event: str
    url: str
    payload: Any = Field(description="The event as sent (docs/automation.md#webhooks).")
    run_id: str | None
    state: str = Field(description="pending, delivered or failed.")
    tries: int
    next_try_at: datetime | None
    created_at: datetime
    finished_at: datetime | None
    last_status: int | None
    try_log: list[TryView]


class DeliveriesOutput(Output):
    """`webhooks test` (the ping's delivery) and `webhooks deliver` (the deliveries tried)."""

    deliveries: list[DeliveryEntry]
    delivered: bool = Field(description="Every delivery listed was delivered.")


def proposal_entry(proposal: Proposal, with_diff: bool = True) -> ProposalEntry:
    return ProposalEntry(
        id=proposal.id,
        kind=proposal.kind,
        status=proposal.status,
        benchmark=proposal.benchmark_name,
        title=proposal.title,
        rationale=proposal.rationale,
        summary=dict(proposal.summary),
        created_at=proposal.created_at,
        created_by=proposal.created_by,
        decided_at=proposal.decided_at,
        decided_by=proposal.decided_by,
        decision_note=proposal.decision_note,
        diff=proposal.diff() if with_diff else None,
    )


def proposal_decided(proposal: Proposal) -> ProposalDecided:
    accepted = proposal.status == "accepted"
    return ProposalDecided(
        id=proposal.id,
        status=proposal.status,
        benchmark_root=str(proposal.benchmark_root),
        written=[change.path for change in proposal.changes] if accepted else [],
        result_hash=proposal.result_hash,
    )


def schedule_entry(schedule: Schedule, firings: Sequence[Firing] = ()) -> ScheduleEntry:
    return ScheduleEntry(
        id=schedule.id,
        benchmark=schedule.benchmark,
        agent_name=schedule.agent_name,
        agent_repo=schedule.agent_repo,
        settings=dict(schedule.settings),
        cron=schedule.cron,
        missed=schedule.missed,
        grace_sec=schedule.grace_sec,
        created_at=schedule.created_at,
        created_by=schedule.created_by,
        next_due_at=schedule.next_due_at,
        firings=[FiringView.model_validate(f, from_attributes=True) for f in firings],
    )


def webhook_entries(webhooks: Mapping[str, WebhookConfig]) -> list[WebhookEntry]:
    return [
        WebhookEntry(
            name=name,
            url=hook.shown_url(),
            events=list(hook.events),
            benchmarks=None if hook.benchmarks is None else list(hook.benchmarks),
            secret_env=hook.secret_env,
            max_tries=hook.max_tries,
        )
        for name, hook in sorted(webhooks.items())
    ]


def delivery_entry(delivery: Delivery, tries: Sequence[Try] = ()) -> DeliveryEntry:
    return DeliveryEntry(
        id=delivery.id,
        webhook=delivery.webhook,
        event=delivery.event,
        url=delivery.url,
        payload=json.loads(delivery.payload),
        run_id=delivery.run_id,
        state=delivery.state,
        tries=delivery.tries,
        next_try_at=delivery.next_try_at,
        created_at=delivery.created_at,
        finished_at=delivery.finished_at,
        last_status=delivery.last_status,
        try_log=[TryView.model_validate(t, from_attributes=True) for t in tries],
    )


def deliveries_output(
    deliveries: Sequence[Delivery], tries: Mapping[str, Sequence[Try]]
) -> DeliveriesOutput:
    entries = [delivery_entry(d, tries.get(d.id, ())) for d in deliveries]
    return DeliveriesOutput(
        deliveries=entries, delivered=all(e.state == "delivered" for e in entries)
    )
