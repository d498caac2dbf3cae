"""Webhook deliveries: an event becomes one delivery per webhook that wants it, kept in the store
until it is delivered or its tries are spent.

A delivery's body is built once (secrets scrubbed), stored, and sent as those exact bytes with an
HMAC-SHA256 signature (automation/signing.py). `deliver_due` claims the deliveries whose next try
is due (each claimed by one process: `FOR UPDATE SKIP LOCKED` on PostgreSQL, `BEGIN IMMEDIATE` on
SQLite), POSTs them, and records every try: the status code and the response's first 4 KiB, or
why no response came. A 2xx answer delivers it; anything else (a redirect included: redirects are
not followed) is tried again after `retry_base_sec * 2^(tries - 1)` seconds, up to `max_tries`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.exc import OperationalError

from benchyard import secrets
from benchyard.automation.signing import DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, sign
from benchyard.automation.webhook_config import WebhookConfig, WebhookUnusable
from benchyard.store.schema import webhook_deliveries, webhook_tries
from benchyard.store.store import Store, aware

if TYPE_CHECKING:
    import httpx

RESPONSE_CHARS = 4096
CLAIM_SEC = 120.0  # a claimed delivery is not claimed again for this long (its lease)
MAX_BACKOFF_SEC = 3600.0
BATCH = 20
d = webhook_deliveries


@dataclass(frozen=True)
class Delivery:
    id: str
    webhook: str
    event: str
    url: str
    payload: str
    run_id: str | None
    state: str  # pending | delivered | failed
    tries: int
    next_try_at: datetime | None
    created_at: datetime
    finished_at: datetime | None
    last_status: int | None


@dataclass(frozen=True)
class Try:
    delivery_id: str
    try_number: int
    at: datetime
    status_code: int | None
    response: str | None
    error: str | None
    duration_sec: float


# ---- emitting ----------------------------------------------------------------------------------


def emit(
    store: Store,
    webhooks: Mapping[str, WebhookConfig],
    event: str,
    payload: Callable[[str], dict[str, Any]],
    *,
    benchmark: str | None = None,
    run_id: str | None = None,
    now: datetime | None = None,
) -> list[Delivery]:
    """Record a delivery of `event` for each webhook that wants it; `payload(web_url)` builds the
    event's fields with links into that webhook's web UI. Nothing is sent here."""
    moment = now or datetime.now(UTC)
    made = []
    for name, hook in sorted(webhooks.items()):
        if not hook.wants(event, benchmark):
            continue
        delivery_id = uuid.uuid4().hex[:16]
        body = {
            "event": event,
            "delivery": delivery_id,
            "webhook": name,
            "sent_at": moment.isoformat().replace("+00:00", "Z"),
            **payload(hook.web_url.rstrip("/")),
        }
        text = json.dumps(secrets.scrub_value(body), ensure_ascii=False, indent=None)
        row = {
            "id": delivery_id,
            "webhook": name[:200],
            "event": event,
            "url": shown_url(hook),
            "payload": secrets.scrub(text),
            "run_id": run_id,
            "state": "pending",
            "tries": 0,
            "next_try_at": moment,
            "created_at": moment,
        }
        with store.engine.begin() as connection:
            connection.execute(insert(d).values(**row))
        made.append(_delivery_from(row))
    return made


def shown_url(hook: WebhookConfig) -> str:
    if hook.url is not None:
        return secrets.scrub(hook.url)
    return f"{secrets.REDACTED} (${hook.url_env})"


# ---- delivering --------------------------------------------------------------------------------


def due_count(store: Store, now: datetime, within_sec: float = 0.0) -> int:
    """Pending deliveries whose next try is due within `within_sec` (a plain read)."""
    query = (
        select(func.count())
        .select_from(d)
        .where(d.c.state == "pending", d.c.next_try_at <= now + timedelta(seconds=within_sec))
    )
    with store.engine.connect() as connection:
        return int(connection.execute(query).scalar_one())


def deliver_due(
    store: Store,
    webhooks: Mapping[str, WebhookConfig],
    now: Callable[[], datetime] | None = None,
    client: httpx.Client | None = None,
) -> list[Delivery]:
    """Send every delivery whose next try is due; returns them as they ended up."""
    clock = now or (lambda: datetime.now(UTC))
    if due_count(store, clock()) == 0:
        return []
    import httpx

    own = client is None
    http = client or httpx.Client(follow_redirects=False, trust_env=False)
    done = []
    try:
        while claimed := _claim(store, clock()):
            for delivery in claimed:
                done.append(_send(store, delivery, webhooks.get(delivery.webhook), http, clock))
    finally:
        if own:
            http.close()
    return done


def _claim(store: Store, now: datetime) -> list[Delivery]:
    def body(connection: Connection) -> list[Delivery]:
        query = (
            select(d)
            .where(d.c.state == "pending", d.c.next_try_at <= now)
            .order_by(d.c.next_try_at, d.c.id)
            .limit(BATCH)
        )
        if store.engine.dialect.name != "sqlite":
            query = query.with_for_update(skip_locked=True)
        rows = connection.execute(query).all()
        if rows:
            connection.execute(
                update(d)
                .where(d.c.id.in_([row.id for row in rows]))
                .values(next_try_at=now + timedelta(seconds=CLAIM_SEC))
            )
        return [_delivery(row) for row in rows]

    return _transact(store, body)


def _send(
    store: Store,
    delivery: Delivery,
    hook: WebhookConfig | None,
    http: httpx.Client,
    clock: Callable[[], datetime],
) -> Delivery:
    import httpx

    number = delivery.tries + 1
    at = clock()
    started = time.monotonic()
    status: int | None = None
    response: str | None = None
    error: str | None = None
    max_tries, base = (hook.max_tries, hook.retry_base_sec) if hook else (1, 1.0)
    if hook is None:
        error = f"the webhook '{delivery.webhook}' is no longer in benchyard.yaml"
    else:
        try:
            url = hook.resolved_url()
            body = delivery.payload.encode()
            answer = http.post(
                url,
                content=body,
                headers={
                    "Content-Type": "application/json",
                    "User-Agent": _user_agent(),
                    EVENT_HEADER: delivery.event,
                    DELIVERY_HEADER: delivery.id,
                    SIGNATURE_HEADER: sign(hook.secret(), body),
                },
                timeout=hook.timeout_sec,
            )
            status = answer.status_code
            response = secrets.scrub(answer.text[:RESPONSE_CHARS])
        except WebhookUnusable as unusable:
            error = str(unusable)
        except httpx.HTTPError as failed:
            error = secrets.scrub(f"{type(failed).__name__}: {failed}")[:RESPONSE_CHARS]
    duration = time.monotonic() - started
    delivered = status is not None and 200 <= status < 300
    if delivered:
        values: dict[str, Any] = {"state": "delivered", "next_try_at": None, "finished_at": at}
    elif number >= max_tries or hook is None:
        values = {"state": "failed", "next_try_at": None, "finished_at": at}
    else:
        wait = min(MAX_BACKOFF_SEC, base * 2 ** (number - 1))
        values = {"state": "pending", "next_try_at": at + timedelta(seconds=wait)}
    values |= {"tries": number, "last_status": status}
    with store.engine.begin() as connection:
        connection.execute(
            insert(webhook_tries).values(
                delivery_id=delivery.id,
                try_number=number,
                at=at,
                status_code=status,
                response=response,
                error=error,
                duration_sec=duration,
            )
        )
        connection.execute(update(d).where(d.c.id == delivery.id).values(**values))
    return Delivery(**{**vars(delivery), **values})


def _user_agent() -> str:
    from benchyard import __version__

    return f"benchyard/{__version__}"


def _transact(store: Store, body: Callable[[Connection], list[Delivery]]) -> list[Delivery]:
    for attempt in range(1, 6):
        try:
            with store.engine.connect() as connection:
                if store.engine.dialect.name == "sqlite":
                    connection.exec_driver_sql("BEGIN IMMEDIATE")
                result = body(connection)
                connection.commit()
                return result
        except OperationalError as error:
            state = getattr(error.orig, "sqlstate", None) or ""
            if not state.startswith("40") or attempt == 5:
                raise
    raise AssertionError("unreachable")


# ---- reading -----------------------------------------------------------------------------------


def list_deliveries(
    store: Store,
    limit: int = 50,
    *,
    webhook: str | None = None,
    run_id: str | None = None,
    offset: int = 0,
) -> list[Delivery]:
    """The newest deliveries first."""
    query = select(d).order_by(d.c.created_at.desc(), d.c.id.desc())
    if webhook is not None:
        query = query.where(d.c.webhook == webhook)
    if run_id is not None:
        query = query.where(d.c.run_id == run_id)
    with store.engine.connect() as connection:
        rows = connection.execute(query.offset(offset).limit(limit)).all()
    return [_delivery(row) for row in rows]


def count_deliveries(store: Store) -> int:
    with store.engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(d)).scalar_one())


def tries_of(store: Store, delivery_ids: list[str]) -> dict[str, list[Try]]:
    if not delivery_ids:
        return {}
    query = (
        select(webhook_tries)
        .where(webhook_tries.c.delivery_id.in_(delivery_ids))
        .order_by(webhook_tries.c.delivery_id, webhook_tries.c.try_number)
    )
    grouped: dict[str, list[Try]] = {}
    with store.engine.connect() as connection:
        for row in connection.execute(query):
            values = row._asdict()
            values["at"] = aware(values["at"])
            grouped.setdefault(row.delivery_id, []).append(Try(**values))
    return grouped


def _delivery(row: Any) -> Delivery:
    return _delivery_from(row._asdict())


def _delivery_from(values: Mapping[str, Any]) -> Delivery:
    fields: dict[str, Any] = {name: values.get(name) for name in Delivery.__dataclass_fields__}
    for key in ("next_try_at", "created_at", "finished_at"):
        fields[key] = aware(fields[key])
    return Delivery(**fields)
