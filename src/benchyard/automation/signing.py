"""Signing webhook bodies: `X-Benchyard-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`
with the webhook's secret. The body carries its own `sent_at` and delivery id, so a receiver can
refuse replays of old deliveries."""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Benchyard-Signature-256"
EVENT_HEADER = "X-Benchyard-Event"
DELIVERY_HEADER = "X-Benchyard-Delivery"
PREFIX = "sha256="


def sign(secret: bytes, body: bytes) -> str:
    return PREFIX + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify(secret: bytes, body: bytes, header: str | None) -> bool:
    """Whether the header is the body's signature with this secret (compared in constant time)."""
    if not header or not header.startswith(PREFIX):
        return False
    return hmac.compare_digest(sign(secret, body), header)
