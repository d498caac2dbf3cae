"""The watchdog: every try ends, whatever it waits on.

Each phase of a try already has a limit of its own: the agent's timeout (its process tree killed
at the deadline, sandbox/process.py) and each check's `timeout_sec`. The watchdog is the line
behind them, for a wait that nothing else would end (an exit that was never seen, a connection
that never closes, a bug): a phase still running WATCHDOG_GRACE_SEC past its own limit is
cancelled and the try ends with a cause that names the watchdog (`overrun`). Behind that again, the
worker gives each attempt a ceiling (`attempt_ceiling_sec`, all its tries and their backoff): an
attempt whose task outlives even its cancellation is recorded as timed out and left behind, so
that its run ends (runner/worker.py)."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable
from typing import Any, TypeVar

from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.spec.models import Scenario

T = TypeVar("T")
WATCHDOG_GRACE_SEC = 30.0  # past a phase's own limit, before the watchdog cancels it
ABANDON_GRACE_SEC = 10.0  # past its cancellation, before an attempt's task is left behind
CHECK_ALLOWANCE_SEC = 120.0  # a check that names no limit of its own (a judge's call, say)
WATCHDOG_CAUSE = "the watchdog stopped it"

# The deadline of the phase each task is in, for the worker to tell a task its cancellation did
# not end (`overdue`): it marks such attempts stuck in the queue.
_deadlines: weakref.WeakKeyDictionary[asyncio.Task[Any], float] = weakref.WeakKeyDictionary()


def grading_limit_sec(scenario: Scenario) -> float:
    """How long grading the scenario may take: its checks' own limits, one after another."""
    total = 0.0
    for check in scenario.checks:
        limit = check.params.get("timeout_sec")
        total += float(limit) if isinstance(limit, int | float) else CHECK_ALLOWANCE_SEC
    return total


def attempt_ceiling_sec(
    agent_limit_sec: float, scenario: Scenario, tries: int, backoff_sec: float
) -> float:
    """The longest an attempt of `tries` tries can take while every phase keeps its limits."""
    per_try = agent_limit_sec + grading_limit_sec(scenario) + 2 * WATCHDOG_GRACE_SEC + 1.0
    return tries * per_try + backoff_sec


async def overrun(work: Awaitable[T], limit_sec: float, kind: FailureKind, what: str) -> T:
    """`work`, cancelled when it runs WATCHDOG_GRACE_SEC past `limit_sec`: the try then fails
    with `kind`, its cause saying so."""
    grace_sec = WATCHDOG_GRACE_SEC
    deadline = asyncio.timeout(limit_sec + grace_sec)
    task = asyncio.current_task()
    if task is not None:
        _deadlines[task] = asyncio.get_running_loop().time() + limit_sec + grace_sec
    try:
        async with deadline:
            return await work
    except TimeoutError:
        if not deadline.expired():
            raise
        raise AttemptFailure(
            kind,
            f"{what} ran past its {limit_sec:g} s limit and did not end within "
            f"{grace_sec:g} s more: {WATCHDOG_CAUSE}",
        ) from None
    finally:
        if task is not None:
            _deadlines.pop(task, None)


def overdue(task: asyncio.Task[Any], now: float) -> bool:
    """Whether the watchdog cancelled the task's phase ABANDON_GRACE_SEC ago or more and it still
    runs (`now` on the loop's clock): stuck."""
    deadline = _deadlines.get(task)
    return deadline is not None and now > deadline + ABANDON_GRACE_SEC
