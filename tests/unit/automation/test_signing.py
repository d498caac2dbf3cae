"""Webhook signatures: HMAC-SHA256 of the raw body, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac

from benchyard.automation.signing import sign, verify


def test_a_signature_is_the_hmac_of_the_body_and_verifies() -> None:
    body = b'{"event": "run.finished"}'
    header = sign(b"s3cret-key", body)
    assert header == "sha256=" + hmac.new(b"s3cret-key", body, hashlib.sha256).hexdigest()
    assert verify(b"s3cret-key", body, header)


def test_another_body_secret_or_header_does_not_verify() -> None:
    body = b'{"event": "run.finished"}'
    header = sign(b"s3cret-key", body)
    assert not verify(b"s3cret-key", body + b" ", header)
    assert not verify(b"other-key", body, header)
    assert not verify(b"s3cret-key", body, header.removeprefix("sha256="))
    assert not verify(b"s3cret-key", body, None)
