"""How long to wait before trying again: exponential backoff, capped, with or without jitter.

Below every user: the runner's retries of a try, the provider client's retries of a request,
webhook deliveries."""

from __future__ import annotations

import random

MAX_BACKOFF_SEC = 30.0


def exponential_delay(base_sec: float, try_number: int, cap_sec: float) -> float:
    """base * 2^(n-1), at most `cap_sec`."""
    delay: float = base_sec * 2.0 ** (try_number - 1)
    return min(cap_sec, delay)


def backoff_delay(base_sec: float, try_number: int) -> float:
    """Exponential backoff with jitter: base * 2^(n-1), capped at MAX_BACKOFF_SEC, scaled by a
    random factor in [0.5, 1.5)."""
    return exponential_delay(base_sec, try_number, MAX_BACKOFF_SEC) * (0.5 + random.random())
