"""Backoff: exponential, capped, and with jitter in [0.5, 1.5) of it."""

from __future__ import annotations

import pytest

from benchyard.backoff import MAX_BACKOFF_SEC, backoff_delay, exponential_delay


def test_exponential_doubles_per_try_up_to_the_cap() -> None:
    assert [exponential_delay(1.0, n, 10.0) for n in (1, 2, 3, 4, 5)] == [1, 2, 4, 8, 10]


@pytest.mark.parametrize("try_number", [1, 2, 3, 10])
def test_jitter_stays_within_half_and_one_and_a_half(try_number: int) -> None:
    plain = exponential_delay(0.5, try_number, MAX_BACKOFF_SEC)
    for _ in range(50):
        assert 0.5 * plain <= backoff_delay(0.5, try_number) < 1.5 * plain
