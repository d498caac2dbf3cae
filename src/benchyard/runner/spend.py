"""Spending under control: a pilot that runs a sample of a run first and forecasts the whole
run's cost and time with an interval, and a budget that stops a run before its spend would pass
it, leaving the unfinished attempts queued for `benchyard worker`.

Both act through one `SpendGate` that the scheduler asks before it starts each attempt
(runner/worker.py), and that sees every finished try (each try's agent and judge cost).

- **Budget.** The next attempt starts only while spent + (running + 1) x the mean cost of a
  finished attempt stays within the budget; until an attempt has finished, one runs at a time.
  A run that reports no cost (an agent that logs none) is never stopped.
- **Pilot.** The first `size` attempts started are a random sample of the plan (seeded); the
  others wait until the sample has finished; then the forecast: the run's total cost M x mean,
  with a 95% Student-t interval for a mean estimated from a sample drawn without replacement
  (finite-population corrected), and its wall time, the pilot's plus the rest's at the run's
  concurrency.
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from benchyard.runner.execute import RunObserver
from benchyard.store.records import AttemptRecord, RunRecord

T = TypeVar("T")


def pilot_order(plan: Sequence[T], size: int, seed: int = 0) -> list[T]:
    """The plan with a random sample of `size` attempts first (the pilot), the rest after in
    their order."""
    if size >= len(plan):
        return list(plan)
    chosen = sorted(random.Random(seed).sample(range(len(plan)), size))
    rest = [item for index, item in enumerate(plan) if index not in set(chosen)]
    return [plan[index] for index in chosen] + rest


def _t975(df: int) -> float:
    from benchyard.audit.build import t_975

    return t_975(df)


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Forecast:
    pilot_attempts: int
    planned_attempts: int
    pilot_cost_usd: float
    pilot_wall_sec: float
    cost_usd: Estimate
    wall_sec: Estimate
    concurrency: int

    def to_json(self) -> dict[str, object]:
        return {
            "pilot_attempts": self.pilot_attempts,
            "planned_attempts": self.planned_attempts,
            "pilot_cost_usd": self.pilot_cost_usd,
            "pilot_wall_sec": self.pilot_wall_sec,
            "cost_usd": vars(self.cost_usd),
            "wall_sec": vars(self.wall_sec),
            "concurrency": self.concurrency,
        }

    def describe(self) -> str:
        def money(e: Estimate) -> str:
            if e.low is None or e.high is None:
                return f"${e.value:.4f} (no interval from a pilot of one)"
            return f"${e.value:.4f} (95% interval ${e.low:.4f} to ${e.high:.4f})"

        def clock(e: Estimate) -> str:
            if e.low is None or e.high is None:
                return f"{_duration(e.value)}"
            return f"{_duration(e.value)} ({_duration(e.low)} to {_duration(e.high)})"

        return (
            f"pilot: {self.pilot_attempts} of {self.planned_attempts} attempts cost "
            f"${self.pilot_cost_usd:.4f} in {_duration(self.pilot_wall_sec)}; forecast for the "
            f"whole run: {money(self.cost_usd)}, {clock(self.wall_sec)} at concurrency {self.concurrency}"
        )


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def forecast_total(values: Sequence[float], planned: int) -> Estimate:
    """The total over `planned` units from the values of a random sample of them (without
    replacement): planned x mean, with a 95% t interval, finite-population corrected; the
    total is never below what the sample already holds."""
    n = len(values)
    mean = statistics.fmean(values) if values else 0.0
    total = planned * mean
    if n < 2:
        return Estimate(total, None, None)
    correction = max(0.0, 1 - n / planned) if planned else 0.0
    half = _t975(n - 1) * planned * statistics.stdev(values) * math.sqrt(correction / n)
    floor = sum(values)
    return Estimate(total, max(floor, total - half), total + half)


def forecast(
    costs: Sequence[float],
    durations: Sequence[float],
    planned: int,
    concurrency: int,
    pilot_wall_sec: float,
) -> Forecast:
    cost = forecast_total(costs, planned)
    remaining = max(0, planned - len(durations))
    lanes = max(1, min(concurrency, remaining)) if remaining else 1
    rest = forecast_total(durations, planned)
    spent = sum(durations)

    def wall(total: float | None) -> float | None:
        if total is None:
            return None
        return pilot_wall_sec + max(0.0, total - spent) / lanes

    value = wall(rest.value)
    assert value is not None
    return Forecast(
        pilot_attempts=len(costs),
        planned_attempts=planned,
        pilot_cost_usd=sum(costs),
        pilot_wall_sec=pilot_wall_sec,
        cost_usd=cost,
        wall_sec=Estimate(value, wall(rest.low), wall(rest.high)),
        concurrency=concurrency,
    )


def try_cost(record: AttemptRecord) -> float:
    return (record.cost_usd or 0.0) + (record.judge_cost_usd or 0.0)


@dataclass
class SpendGate:
    """Asked before each attempt starts; told of every finished try."""

    planned: int
    concurrency: int
    budget_usd: float | None = None
    pilot: int | None = None
    pilot_only: bool = False
    spent_usd: float = 0.0
    started: int = 0
    finished: int = 0
    attempt_costs: dict[tuple[str, int], float] = field(default_factory=dict)
    attempt_secs: dict[tuple[str, int], float] = field(default_factory=dict)
    done: list[tuple[str, int]] = field(default_factory=list)  # finished attempts, in order
    forecast: Forecast | None = None
    stop_reason: str | None = None
    _pilot_done: asyncio.Event = field(default_factory=asyncio.Event)
    _progress: asyncio.Event = field(default_factory=asyncio.Event)
    _clock: float = field(default_factory=time.monotonic)
    _on_forecast: list[Callable[[Forecast], None]] = field(default_factory=list)

    def mean_attempt_cost(self) -> float | None:
        """The mean cost of a finished attempt (its retried tries included); None before one."""
        finals = [self.attempt_costs[key] for key in self.done]
        return statistics.fmean(finals) if finals else None

    async def before_start(self, running: Callable[[], int]) -> bool:
        """Whether the scheduler may start one more attempt (False: stop starting attempts, the
        rest stay queued). It waits at the end of the pilot, and, under a budget, while no
        attempt has finished yet and one is running (nothing is known of the cost yet)."""
        while True:
            if self.stop_reason is not None:
                return False
            if self.pilot and self.started >= self.pilot and self.pilot < self.planned:
                if not self._pilot_done.is_set():
                    await self._pilot_done.wait()
                    continue
                if self.pilot_only:
                    self.stop_reason = f"pilot only: {self.pilot} of {self.planned} attempts ran"
                    return False
            if self.budget_usd is not None:
                mean = self.mean_attempt_cost()
                if mean is None and running() > 0:
                    self._progress.clear()
                    await self._progress.wait()
                    continue
                projected = self.spent_usd + (running() + 1) * (mean or 0.0)
                if self.spent_usd >= self.budget_usd or projected > self.budget_usd:
                    self.stop_reason = (
                        f"budget ${self.budget_usd:g} reached: ${self.spent_usd:.4f} spent, the "
                        f"next attempt would bring it to about ${projected:.4f}"
                    )
                    return False
            self.started += 1
            return True

    def finished_try(self, record: AttemptRecord) -> None:
        key = (record.scenario_id, record.epoch)
        cost = try_cost(record)
        self.spent_usd += cost
        self.attempt_costs[key] = self.attempt_costs.get(key, 0.0) + cost
        self.attempt_secs[key] = self.attempt_secs.get(key, 0.0) + record.duration_sec
        self._progress.set()
        if record.superseded:
            return
        self.finished += 1
        self.done.append(key)
        if (
            self.pilot
            and not self._pilot_done.is_set()
            and self.finished >= min(self.pilot, self.planned)
        ):
            finals = list(self.done)
            self.forecast = forecast(
                [self.attempt_costs[k] for k in finals],
                [self.attempt_secs[k] for k in finals],
                self.planned,
                self.concurrency,
                time.monotonic() - self._clock,
            )
            for callback in self._on_forecast:
                callback(self.forecast)
            self._pilot_done.set()

    def on_forecast(self, callback: Callable[[Forecast], None]) -> None:
        self._on_forecast.append(callback)

    def observe(self, inner: RunObserver) -> RunObserver:
        return _Observing(self, inner)


class _Observing:
    def __init__(self, gate: SpendGate, inner: RunObserver) -> None:
        self.gate, self.inner = gate, inner

    def started(self, run: RunRecord) -> None:
        self.inner.started(run)

    def finished_try(self, record: AttemptRecord) -> None:
        self.gate.finished_try(record)
        self.inner.finished_try(record)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)
