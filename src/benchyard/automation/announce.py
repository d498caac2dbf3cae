"""Announcing an event from a command that is not a worker (`benchyard gate`): record the
deliveries and send them now, retrying for a short while; what is still not delivered stays in the
store for the next worker, or `benchyard webhooks deliver`.

The gate command calls, once it has decided:

    from benchyard.automation.announce import announce_gate
    announce_gate(store, config.webhooks, run, decision.model_dump(mode="json"))
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from benchyard.automation import events
from benchyard.automation.webhook_config import WebhookConfig, register_webhook_secrets
from benchyard.automation.webhooks import Delivery, deliver_due, due_count, emit
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

DRAIN_SEC = 15.0


def announce_gate(
    store: Store,
    webhooks: Mapping[str, WebhookConfig],
    run: RunRecord,
    decision: Mapping[str, Any],
    *,
    drain_sec: float = DRAIN_SEC,
) -> list[Delivery]:
    """Send `gate.decision` to the webhooks that want it for this run's benchmark."""
    register_webhook_secrets(dict(webhooks))
    made = emit(
        store,
        webhooks,
        events.GATE_DECISION,
        events.gate_payload(run, decision),
        benchmark=run.benchmark_name,
        run_id=run.id,
    )
    if made:
        send_now(store, webhooks, drain_sec)
    return made


def send_now(
    store: Store, webhooks: Mapping[str, WebhookConfig], drain_sec: float = DRAIN_SEC
) -> None:
    """Deliver what is due, and go on retrying while a retry falls within `drain_sec`."""
    deadline = time.monotonic() + drain_sec
    while True:
        deliver_due(store, webhooks)
        left = deadline - time.monotonic()
        if left <= 0 or due_count(store, datetime.now(UTC), left) == 0:
            return
        time.sleep(min(0.25, left))
