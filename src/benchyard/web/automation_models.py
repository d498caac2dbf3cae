"""The pages of automation as data (docs/web.md#proposals-and-automation): proposals with their
diff, and schedules with webhook deliveries. Kept apart from models.py, in its conventions."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from benchyard.web.models import DiffLine, Paging, WebModel


class ProposalRow(WebModel):
    id: str
    kind: str = Field(description="create or update.")
    status: str = Field(description="pending, accepted or rejected.")
    benchmark: str
    title: str
    created_by: str
    created_at: datetime
    decided_by: str | None
    decided_at: datetime | None
    added: list[str]
    changed: list[str]
    removed: list[str]


class ProposalsPage(WebModel):
    proposals: list[ProposalRow]
    status: str | None = Field(description="The status shown, or None for all.")


class ProposalFile(WebModel):
    path: str
    change: str = Field(description="added, changed or removed.")
    lines: list[DiffLine]


class ProposalPage(WebModel):
    proposal: ProposalRow
    benchmark_root: str
    rationale: str
    decision_note: str | None
    result_hash: str | None = Field(description="The benchmark's content hash once written.")
    files: list[ProposalFile]
    message: str | None = None


class TryView(WebModel):
    try_number: int
    at: datetime
    status_code: int | None
    response: str | None
    error: str | None
    duration_sec: float


class DeliveryView(WebModel):
    id: str
    webhook: str
    event: str
    url: str
    run_id: str | None
    state: str = Field(description="pending, delivered or failed.")
    tries: int
    next_try_at: datetime | None
    created_at: datetime
    finished_at: datetime | None
    last_status: int | None
    payload: str = Field(description="The body sent, as JSON text (signed as these bytes).")
    try_log: list[TryView]


class FiringView(WebModel):
    due_at: datetime
    action: str = Field(description="claimed, enqueued, skipped or refused.")
    missed: int
    run_id: str | None
    baseline_run_id: str | None
    regression: bool | None
    detail: str | None


class ScheduleView(WebModel):
    id: str
    benchmark: str
    agent: str
    cron: str
    missed: str
    next_due_at: datetime
    firings: list[FiringView]


class WebhookView(WebModel):
    name: str
    url: str
    events: list[str]
    benchmarks: list[str] | None


class AutomationPage(WebModel):
    schedules: list[ScheduleView]
    webhooks: list[WebhookView]
    deliveries: list[DeliveryView]
    paging: Paging
