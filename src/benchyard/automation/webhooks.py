"""Webhook deliveries: an event becomes one delivery per webhook that wants it, kept in the store
until it is delivered or its tries are spent.

A delivery's body is built once (secrets scrubbed), stored, and sent as those exact bytes with an
HMAC-SHA256 signature (automation/signing.py). `deliver_due` claims the deliveries whose next try
is due (each claimed by one process: `FOR UPDATE SKIP LOCKED` on PostgreSQL, `BEGIN IMMEDIATE` on
SQLite), POSTs them, and records every try: the status code and the response's first 4 KiB, or
why no response came. A 2xx answer delivers it; anything else (a redirect included: redirects are
not followed) is tried again after `retry_base_sec * 2^(tries - 1)` seconds, up to `max_tries`.

A receiver is untrusted: each try has one deadline for all of it (`timeout_sec`: connecting,
sending, the status and the response read), never one per read, so that a receiver trickling its
answer a byte at a time cannot hold a delivery; the response is streamed, undecoded, and only its
first RESPONSE_BYTES are read before the connection is closed, so that a huge body never reaches
memory. The deliveries claimed together are sent concurrently, so one slow receiver holds up no
other delivery for longer than its deadline.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, func, insert, select, update

from benchyard import secrets
from benchyard.automation.signing import DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, sign
from benchyard.automation.webhook_config import MAX_TIMEOUT_SEC, WebhookConfig, WebhookUnusable
from benchyard.backoff import exponential_delay
from benchyard.store.database import EngineDatabase
from benchyard.store.run_list import moment
from benchyard.store.schema import webhook_deliveries, webhook_tries
from benchyard.store.store import Store

if TYPE_CHECKING:
    import httpx

RESPONSE_BYTES = 4096  # what is read of a receiver's response, at most
RESPONSE_CHARS = RESPONSE_BYTES
# A claimed delivery is not claimed again for this long (its lease): past the longest deadline a
# try may have (webhook_config's timeout_sec), so that no two processes send it at once.
CLAIM_SEC = MAX_TIMEOUT_SEC + 30.0
MAX_WAIT_SEC = 3600.0
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
    at = now or datetime.now(UTC)
    made = []
    for name, hook in sorted(webhooks.items()):
        if not hook.wants(event, benchmark):
            continue
        delivery_id = uuid.uuid4().hex[:16]
        body = {
            "event": event,
            "delivery": delivery_id,
            "webhook": name,
            "sent_at": at.isoformat().replace("+00:00", "Z"),
            **payload(hook.web_url.rstrip("/")),
        }
        text = json.dumps(secrets.scrub_value(body), ensure_ascii=False, indent=None)
        row = {
            "id": delivery_id,
            "webhook": name[:200],
            "event": event,
            "url": hook.shown_url(),
            "payload": secrets.scrub(text),
            "run_id": run_id,
            "state": "pending",
            "tries": 0,
            "next_try_at": at,
            "created_at": at,
        }
        with store.engine.begin() as connection:
            connection.execute(insert(d).values(**row))
        made.append(_delivery_from(row))
    return made


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
) -> list[Delivery]:
    """Send every delivery whose next try is due; returns them as they ended up. Each try ends
    within its webhook's `timeout_sec`, whatever the receiver does."""
    clock = now or (lambda: datetime.now(UTC))
    if due_count(store, clock()) == 0:
        return []
    done = []
    while claimed := _claim(store, clock()):
        answers = _in_own_loop(functools.partial(_post_all, claimed, webhooks))
        for delivery, answer in zip(claimed, answers, strict=True):
            done.append(_record(store, delivery, webhooks.get(delivery.webhook), answer, clock))
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

    return EngineDatabase(store.engine).transact_connection(body)


@dataclass
class Answer:
    """What one try got: the status and the response's first bytes, or why there was none."""

    status: int | None = None
    response: str | None = None
    error: str | None = None
    duration_sec: float = 0.0
    final: bool = False  # a configuration error (a secret not set): trying again cannot help


def _in_own_loop(make: Callable[[], Any]) -> Any:
    """Run the coroutine `make()` makes to its end in an event loop of its own (in a thread of its
    own when this one already runs a loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(asyncio.run(make())))
    thread.start()
    thread.join()
    return result[0]


async def _post_all(claimed: list[Delivery], webhooks: Mapping[str, WebhookConfig]) -> list[Answer]:
    import httpx

    async with httpx.AsyncClient(follow_redirects=False, trust_env=False) as http:
        return list(
            await asyncio.gather(
                *(_post(http, delivery, webhooks.get(delivery.webhook)) for delivery in claimed)
            )
        )


async def _post(http: httpx.AsyncClient, delivery: Delivery, hook: WebhookConfig | None) -> Answer:
    """One try of `delivery`, ended by its deadline whatever the receiver does."""
    import httpx

    answer = Answer()
    started = time.monotonic()
    if hook is None:
        answer.error = f"the webhook '{delivery.webhook}' is no longer in benchyard.yaml"
        return answer
    try:
        async with asyncio.timeout(hook.timeout_sec):
            await _exchange(http, delivery, hook, answer)
    except TimeoutError:
        answer.error = (
            f"the receiver had not answered within the delivery's deadline of "
            f"{hook.timeout_sec:g} s (timeout_sec)"
            if answer.status is None
            else f"the response was cut at the delivery's deadline of {hook.timeout_sec:g} s"
        )
    except WebhookUnusable as unusable:
        answer.error, answer.final = str(unusable), True
    except httpx.HTTPError as failed:
        answer.error = secrets.scrub(f"{type(failed).__name__}: {failed}")[:RESPONSE_CHARS]
    answer.duration_sec = time.monotonic() - started
    return answer


async def _exchange(
    http: httpx.AsyncClient, delivery: Delivery, hook: WebhookConfig, answer: Answer
) -> None:
    """POST the delivery's body; fill in `answer` as its status and first bytes arrive."""
    body = delivery.payload.encode()
    headers = {
        "Content-Type": "application/json",
        "Accept-Encoding": "identity",
        "User-Agent": _user_agent(),
        EVENT_HEADER: delivery.event,
        DELIVERY_HEADER: delivery.id,
        SIGNATURE_HEADER: sign(hook.secret(), body),
    }
    request = http.build_request(
        "POST", hook.resolved_url(), content=body, headers=headers, timeout=hook.timeout_sec
    )
    received = bytearray()
    response = await http.send(request, stream=True)
    try:
        answer.status = response.status_code
        async for chunk in response.aiter_raw():  # raw: a compressed bomb is never inflated
            received += chunk[: RESPONSE_BYTES - len(received)]
            answer.response = _text(received)
            if len(received) >= RESPONSE_BYTES:
                break  # the rest is never read: closing drops the connection
        answer.response = _text(received)
    finally:
        await response.aclose()


def _text(received: bytes | bytearray) -> str:
    return secrets.scrub(received.decode("utf-8", errors="replace"))


def _record(
    store: Store,
    delivery: Delivery,
    hook: WebhookConfig | None,
    answer: Answer,
    clock: Callable[[], datetime],
) -> Delivery:
    """Record one try and what follows from it: delivered, failed, or its next try."""
    number = delivery.tries + 1
    at = clock()
    max_tries, base = (hook.max_tries, hook.retry_base_sec) if hook else (1, 1.0)
    status = answer.status
    delivered = status is not None and 200 <= status < 300
    if delivered:
        values: dict[str, Any] = {"state": "delivered", "next_try_at": None, "finished_at": at}
    elif number >= max_tries or hook is None or answer.final:
        values = {"state": "failed", "next_try_at": None, "finished_at": at}
    else:
        wait = exponential_delay(base, number, MAX_WAIT_SEC)
        values = {"state": "pending", "next_try_at": at + timedelta(seconds=wait)}
    values |= {"tries": number, "last_status": status}
    with store.engine.begin() as connection:
        connection.execute(
            insert(webhook_tries).values(
                delivery_id=delivery.id,
                try_number=number,
                at=at,
                status_code=status,
                response=answer.response,
                error=answer.error,
                duration_sec=answer.duration_sec,
            )
        )
        connection.execute(update(d).where(d.c.id == delivery.id).values(**values))
    return Delivery(**{**vars(delivery), **values})


def _user_agent() -> str:
    from benchyard import __version__

    return f"benchyard/{__version__}"


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
            values["at"] = moment(values["at"])
            grouped.setdefault(row.delivery_id, []).append(Try(**values))
    return grouped


def _delivery(row: Any) -> Delivery:
    return _delivery_from(row._asdict())


def _delivery_from(values: Mapping[str, Any]) -> Delivery:
    fields: dict[str, Any] = {name: values.get(name) for name in Delivery.__dataclass_fields__}
    for key in ("next_try_at", "created_at", "finished_at"):
        fields[key] = moment(fields[key])
    return Delivery(**fields)
