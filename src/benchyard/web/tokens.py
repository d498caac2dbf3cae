"""The access token of a server on a non-loopback address: generated once, shown once, stored
only as its SHA-256 (the token has 256 random bits, so a fast hash is enough)."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

TOKEN_FILE = Path(".benchyard") / "web-token.sha256"
PREFIX = "sha256:"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return PREFIX + hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str | None, expected_hash: str) -> bool:
    if not token:
        return False
    return hmac.compare_digest(token_hash(token), expected_hash)


def stored_hash(path: Path) -> str | None:
    """The hash kept in `path`, or None when there is none (or it is not one)."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return text if text.startswith(PREFIX) and len(text) == len(PREFIX) + 64 else None


def store_hash(path: Path, hashed: str) -> None:
    """Write the hash readable by this user only, replacing any earlier one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".new")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(hashed + "\n")
    os.replace(temporary, path)
