"""How each kind of process writes a log line, its everyday lines, and how a failed call to a
dependency reads in the caller's language (gRPC over Go, Node, .NET, ...)."""

# ruff: noqa: E501  (log lines, event messages and fixtures are quoted whole)

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

LEVELS = ("debug", "info", "warn", "error")


def iso(ts: float) -> str:
    return (
        datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.")
        + f"{int(ts * 1000) % 1000:03d}Z"
    )


def line(style: str, ts: float, level: str, text: str, logger: str) -> str:
    """One log line in the format a process of `style` writes."""
    stamp = iso(ts)
    upper = level.upper()
    if style in ("go", "flagd", "collector"):
        return json.dumps({"level": level, "ts": stamp, "logger": logger, "msg": text})
    if style == "node":
        number = {"debug": 20, "info": 30, "warn": 40, "error": 50}[level]
        return json.dumps({"level": number, "time": int(ts * 1000), "name": logger, "msg": text})
    if style == "java":
        plain = stamp.replace("T", " ").rstrip("Z")
        return f"{plain} {upper:<5} [{logger}] {text}"
    if style == "dotnet":
        short = {"debug": "dbug", "info": "info", "warn": "warn", "error": "fail"}[level]
        return f"{stamp} {short}: {logger}[0] {text}"
    if style in ("python", "locust"):
        plain = stamp.replace("T", " ").rstrip("Z").replace(".", ",")
        return f"{plain} {upper} [{logger}] {text}"
    if style == "rust":
        return f"{stamp}  {upper:>5} {logger}: {text}"
    if style in ("cpp", "php", "ruby"):
        return f"[{stamp}] {upper} {logger}: {text}"
    if style in ("envoy", "nginx"):
        return text if text.startswith("[") else f"[{stamp}] [{level}] {text}"
    if style == "redis":
        when = (
            datetime.fromtimestamp(ts, UTC).strftime("%d %b %Y %H:%M:%S.")
            + f"{int(ts * 1000) % 1000:03d}"
        )
        mark = {"debug": ".", "info": "*", "warn": "#", "error": "#"}[level]
        return f"1:M {when} {mark} {text}"
    if style == "postgres":
        plain = stamp.replace("T", " ").rstrip("Z")
        tag = {"debug": "DEBUG", "info": "LOG", "warn": "WARNING", "error": "ERROR"}[level]
        return f"{plain} UTC [1] {tag}:  {text}"
    if style in ("kafka", "rabbitmq"):
        plain = stamp.replace("T", " ").rstrip("Z").replace(".", ",")
        return f"[{plain}] {upper} {text} ({logger})"
    return f"{stamp} {upper} {text}"


def access_line(ts: float, method_path: str, status: int, duration_ms: float, upstream: str) -> str:
    """An envoy access log line."""
    method, _, path = method_path.partition(" ")
    flags = "-" if status < 500 else ("UF" if status == 503 else "-")
    size = 0 if status >= 400 else 1200 + int(duration_ms) % 900
    return (
        f'[{iso(ts)}] "{method or "GET"} {path or "/"} HTTP/1.1" {status} {flags} 0 {size} '
        f'{int(duration_ms)} - "-" "python-requests/2.31.0" "{upstream}"'
    )


def routine(service: str, style: str, operation: str, rng: random.Random) -> tuple[str, str]:
    """An everyday (level, text) line of a healthy service."""
    user = f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}"
    products = ("OLJCESPC7Z", "66VCHSJNUP", "1YMWWN1N4O", "L9ECAV7KIM", "2ZYFJ3GM2N", "0PUK6V6EV0")
    product = rng.choice(products)
    texts = {
        "frontend-proxy": f"{operation} 200",
        "frontend": f"request completed {operation} status=200",
        "ad": f"Targeted ad request received for [{rng.choice(['travel', 'binoculars', 'telescopes', 'accessories'])}]",
        "cart": f"GetCartAsync called with userId={user}",
        "checkout": f'[PlaceOrder] user_id="{user}" user_currency="USD"',
        "currency": f"Convert conversion successful from USD to {rng.choice(['EUR', 'JPY', 'CAD', 'GBP'])}",
        "email": f'Order confirmation email sent to "{user[:6]}@example.com"',
        "payment": f"Charge request received. card_type=visa amount={rng.randint(10, 900)}.{rng.randint(0, 99):02d}",
        "product-catalog": f"Product Found product_id={product}",
        "quote": f"Calculated quote for {rng.randint(1, 6)} items",
        "recommendation": f"Receive ListRecommendations for product ids:['{product}']",
        "shipping": f"Received quote: {rng.randint(5, 60)}.{rng.randint(0, 99):02d}",
        "image-provider": f"GET /static/images/{product}.jpg 200",
        "kafka": f"[Partition orders-0] Incremented HW to {rng.randint(10_000, 90_000)}",
        "accounting": f"Order details: orderId={user} shipping cost stored",
        "fraud-detection": f"Consumed record with orderId: {user}, and updated total count to: {rng.randint(100, 9000)}",
        "valkey-cart": f"{rng.randint(1, 90)} changes in 60 seconds. Saving...",
        "postgresql": "checkpoint complete: wrote 12 buffers (0.1%); 0 WAL file(s) added",
        "flagd": "flag evaluation completed",
        "load-generator": f"GET /api/products/{product} 200",
        "otel-collector": f"TracesExporter #traces {rng.randint(20, 200)}",
        "productpage": "GET /productpage 200 reviews=ok details=ok",
        "details": f"GET /details/{rng.randint(0, 5)} 200",
        "reviews": f"GET /reviews/{rng.randint(0, 5)} 200",
        "ratings": f"GET /ratings/{rng.randint(0, 5)} 200",
        "bookinfo-gateway-istio": f"{operation} 200",
        "api-gateway": f"{operation} 200",
        "web-api": f"{operation} 200 in {rng.randint(20, 90)}ms",
        "auth": f"token verified subject=svc-{rng.randint(1, 40)}",
        "accounts": f"account {rng.randint(10_000, 99_999)} loaded",
        "ledger": f"posted entry batch size={rng.randint(1, 20)}",
        "fx-rates": "rates served from cache",
        "notifications": f"notification queued channel={rng.choice(['email', 'push'])}",
        "statement-worker": f"statement rendered account={rng.randint(10_000, 99_999)}",
        "postgres-ledger": "checkpoint complete: wrote 88 buffers (0.5%); 0 WAL file(s) added",
        "redis-sessions": f"{rng.randint(1, 90)} changes in 60 seconds. Saving...",
        "rabbitmq": "accepting AMQP connection",
    }
    text = texts.get(service, f"handled {operation}")
    level = "debug" if service in ("flagd",) else "info"
    return level, text


def call_error(caller_style: str, callee: str, port: int, kind: str, detail: str = "") -> str:
    """How a failed call to `callee` reads in a caller of `caller_style`; `kind` is refused,
    dns, timeout, reset, unavailable (no endpoints), forbidden, auth, or error (the callee
    answered with an error, `detail`)."""
    address = f"{callee}:{port}"
    if caller_style == "go":
        texts = {
            "refused": f'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp {address}: connect: connection refused"',
            "dns": f"rpc error: code = Unavailable desc = name resolver error: produced zero addresses (dial tcp: lookup {callee} on 10.96.0.10:53: no such host)",
            "timeout": "rpc error: code = DeadlineExceeded desc = context deadline exceeded",
            "reset": "rpc error: code = Unavailable desc = error reading from server: read: connection reset by peer",
            "unavailable": f'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp {address}: i/o timeout"',
            "forbidden": "rpc error: code = PermissionDenied desc = RBAC: access denied",
            "auth": f"rpc error: code = Unauthenticated desc = {detail or 'authentication failed'}",
            "error": f"rpc error: code = Internal desc = {detail}",
        }
    elif caller_style == "node":
        texts = {
            "refused": f"14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED {address}",
            "dns": f"14 UNAVAILABLE: Name resolution failed for target dns:{address}: getaddrinfo ENOTFOUND {callee}",
            "timeout": "4 DEADLINE_EXCEEDED: Deadline exceeded after 5.001s",
            "reset": "14 UNAVAILABLE: read ECONNRESET",
            "unavailable": f"14 UNAVAILABLE: No connection established. Last error: connect ETIMEDOUT {address}",
            "forbidden": "7 PERMISSION_DENIED: RBAC: access denied",
            "auth": f"16 UNAUTHENTICATED: {detail or 'authentication failed'}",
            "error": f"13 INTERNAL: {detail}",
        }
    elif caller_style in ("envoy", "nginx"):
        texts = {
            "refused": "upstream connect error or disconnect/reset before headers. reset reason: remote connection failure, transport failure reason: delayed connect error: 111",
            "dns": f"no healthy upstream (cluster {callee} has no resolved hosts)",
            "timeout": "upstream request timeout",
            "reset": "upstream connect error or disconnect/reset before headers. reset reason: connection termination",
            "unavailable": "no healthy upstream",
            "forbidden": "RBAC: access denied",
            "auth": "upstream returned 401",
            "error": f"upstream returned 500: {detail}",
        }
    else:
        texts = {
            "refused": f"Connection refused ({address})",
            "dns": f"Name or service not known: {callee}",
            "timeout": f"Read timed out calling {address} (timeout=5s)",
            "reset": f"Connection reset by peer ({address})",
            "unavailable": f"Connection timed out ({address})",
            "forbidden": f"403 Forbidden from {callee}: RBAC: access denied",
            "auth": detail or f"authentication to {callee} failed",
            "error": f"{callee} returned an error: {detail}",
        }
    return texts.get(kind, texts["error"])
