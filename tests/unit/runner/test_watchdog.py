"""The watchdog's in-task line: a phase that outlives its limit and the grace is cancelled and the
try fails with a cause naming the watchdog; a TimeoutError of the work's own passes unchanged."""

from __future__ import annotations

import asyncio

import pytest

from benchyard.runner import watchdog
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.watchdog import WATCHDOG_CAUSE, overrun


async def test_a_phase_past_its_limit_and_grace_is_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watchdog, "WATCHDOG_GRACE_SEC", 0.05)
    stopped = asyncio.Event()

    async def hangs() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            stopped.set()

    with pytest.raises(AttemptFailure) as failure:
        await overrun(hangs(), 0.05, FailureKind.AGENT_TIMEOUT, "the agent")
    assert failure.value.kind is FailureKind.AGENT_TIMEOUT
    assert WATCHDOG_CAUSE in failure.value.message and "0.05 s limit" in failure.value.message
    assert stopped.is_set()


async def test_a_timeout_of_the_work_itself_is_not_the_watchdogs() -> None:
    async def times_out() -> None:
        raise TimeoutError("the provider took too long")

    with pytest.raises(TimeoutError, match="the provider took too long"):
        await overrun(times_out(), 60, FailureKind.AGENT_TIMEOUT, "the agent")
