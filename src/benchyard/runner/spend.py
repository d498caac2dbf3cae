"""Spending under control: a pilot that runs a sample of a run first and forecasts the whole
run's cost and time with an interval, and a budget that stops a run before its spend would pass
it, leaving the unfinished attempts queued for `benchyard worker`.

Both act through one `SpendGate` that the scheduler asks before it starts each attempt
(runner/worker.py), and that sees every finished try (each try's agent and judge cost). Its
ledger (bridge/ledger.py) also holds what the attempts running spend through their model
bridges, which stop a call that takes the run past its budget.

- **Budget.** The next attempt starts only while spent + (running + 1) x the mean cost of a
  finished attempt stays within the budget, and while the ledger (the running attempts' calls
  through their bridges included) has not reached it; until an attempt has finished, one runs at
  a time.
  A run that reports no cost (an agent that logs none) is never stopped.
- **Pilot.** The first `size` attempts started are a sample of the plan stratified by stratum
  (a scenario's category, and its app where it has one: SRE incidents), seeded: every stratum
  gets at least one attempt while the pilot has room (two while it has room for two each), the
  rest in proportion to the strata's sizes. The others wait until the sample has finished; then
  the forecast: the run's total cost, each stratum's size x its pilot mean, with a 95% Student-t
  interval for a stratified sample drawn without replacement (finite-population corrected,
  Satterthwaite's degrees of freedom; `forecast_stratified` says how each stratum's variance is
  found, never from one observation alone). A pilot whose attempts all cost the same has no
  interval unless it is a census. bench/pilot.py measures the interval's coverage.
  Its wall time: the pilot's plus the rest's at the run's concurrency.
"""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from benchyard.bridge.ledger import RunSpend
from benchyard.runner.execute import RunObserver
from benchyard.spec.models import Scenario
from benchyard.store.records import AttemptRecord, RunRecord

T = TypeVar("T")


def pilot_order(
    plan: Sequence[T], size: int, seed: int = 0, stratum: Callable[[T], str] | None = None
) -> list[T]:
    """The plan with a sample of `size` attempts first (the pilot), the rest after in their
    order. With `stratum`, the sample is stratified (`allocate`), else a simple random one."""
    if size >= len(plan):
        return list(plan)
    rng = random.Random(seed)
    if stratum is None:
        chosen = set(rng.sample(range(len(plan)), size))
    else:
        members: dict[str, list[int]] = {}
        for index, item in enumerate(plan):
            members.setdefault(stratum(item), []).append(index)
        counts = allocate({name: len(indexes) for name, indexes in members.items()}, size, rng)
        chosen = {
            index for name, count in counts.items() for index in rng.sample(members[name], count)
        }
    first = [item for index, item in enumerate(plan) if index in chosen]
    return first + [item for index, item in enumerate(plan) if index not in chosen]


def scenario_stratum(scenario: Scenario) -> str:
    """A scenario's stratum for the pilot: its category, and its app where its environment names
    one (an SRE incident's `app`)."""
    app = scenario.environment.params.get("app") if scenario.environment is not None else None
    return f"{scenario.category}/{app}" if isinstance(app, str) and app else scenario.category


def allocate(sizes: dict[str, int], size: int, rng: random.Random) -> dict[str, int]:
    """How many of each stratum a pilot of `size` samples: two of each while there is room for
    two each (one each while there is room for one), the rest in proportion to the strata's
    sizes; with fewer attempts than strata, one each from strata drawn in proportion to size."""
    total = sum(sizes.values())
    if size >= total:
        return dict(sizes)
    if size < len(sizes):
        names = list(sizes)
        picked: set[str] = set()
        while len(picked) < size:
            left = [name for name in names if name not in picked]
            picked.add(rng.choices(left, weights=[sizes[name] for name in left])[0])
        return {name: 1 for name in names if name in picked}
    each = 2 if size >= 2 * len(sizes) else 1
    counts = {name: min(each, count) for name, count in sizes.items()}
    while sum(counts.values()) < size:
        open_ = [name for name in sizes if counts[name] < sizes[name]]
        name = max(open_, key=lambda n: sizes[n] * size / total - counts[n])
        counts[name] += 1
    return counts


def _t975(df: int) -> float:
    from benchyard.audit.build import t_975

    return t_975(df)


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float | None
    high: float | None
    note: str | None = None  # why there is no interval


@dataclass(frozen=True)
class Forecast:
    pilot_attempts: int
    planned_attempts: int
    pilot_cost_usd: float
    pilot_wall_sec: float
    cost_usd: Estimate
    wall_sec: Estimate
    concurrency: int
    strata: int = 1  # the strata the pilot was drawn from

    def to_json(self) -> dict[str, object]:
        return {
            "pilot_attempts": self.pilot_attempts,
            "planned_attempts": self.planned_attempts,
            "pilot_cost_usd": self.pilot_cost_usd,
            "pilot_wall_sec": self.pilot_wall_sec,
            "cost_usd": vars(self.cost_usd),
            "wall_sec": vars(self.wall_sec),
            "concurrency": self.concurrency,
            "strata": self.strata,
        }

    def describe(self) -> str:
        def money(e: Estimate) -> str:
            if e.low is None or e.high is None:
                return f"${e.value:.4f} ({e.note or 'no interval'})"
            return f"${e.value:.4f} (95% interval ${e.low:.4f} to ${e.high:.4f})"

        def clock(e: Estimate) -> str:
            if e.low is None or e.high is None:
                return f"{_duration(e.value)}"
            return f"{_duration(e.value)} ({_duration(e.low)} to {_duration(e.high)})"

        drawn = f" (drawn from {self.strata} strata)" if self.strata > 1 else ""
        return (
            f"pilot: {self.pilot_attempts} of {self.planned_attempts} attempts{drawn} cost "
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
    """The total over `planned` units from the values of a simple random sample of them."""
    return forecast_stratified({"": list(values)}, {"": planned})


def forecast_stratified(
    observed: Mapping[str, Sequence[float]], population: Mapping[str, int]
) -> Estimate:
    """The total over a population in strata (`population`: each stratum's size) from a sample
    of each drawn without replacement (`observed`): the sum of each stratum's size x its sample
    mean, with a 95% t interval, finite-population corrected, on Satterthwaite's degrees of
    freedom.

    Within a stratum, costs spread in proportion to their level (a stratum twice as dear varies
    twice as much), so the strata sampled twice or more pool their coefficient of variation (on
    sum(n_h - 1) degrees of freedom) and each sampled stratum's variance is that squared times
    its mean squared, or its own sample variance (on n_h - 1 df) when that is larger (a stratum
    that spreads more than the others); a stratum seen once takes the pool's. Where the pool has no
    degrees of freedom, or shows no spread at all, each stratum borrows the whole sample's
    variance instead (between strata included: wider, never narrower). A stratum not sampled is
    estimated at the whole sample's mean, with the variance of a whole stratum's mean:
    size^2 x s^2 x (1 + 1/n). The total is never below what the sample already holds."""
    every = [value for name in population for value in observed.get(name, ())]
    n = len(every)
    spent = sum(every)
    if n == 0:
        return Estimate(0.0, None, None, "no attempt finished in the pilot")
    mean = statistics.fmean(every)
    overall = statistics.variance(every) if n >= 2 else None
    samples = {name: list(observed.get(name, ()))[:size] for name, size in population.items()}
    pooled_df = sum(max(0, len(values) - 1) for values in samples.values())
    pooled_cv2 = 0.0
    if pooled_df:
        pooled_cv2 = (
            sum(
                (len(values) - 1) * statistics.variance(values) / statistics.fmean(values) ** 2
                for values in samples.values()
                if len(values) >= 2 and statistics.fmean(values) > 0
            )
            / pooled_df
        )
    total = 0.0
    parts: list[tuple[float, float]] = []  # (variance of a stratum's total, its df): its own
    pooled = 0.0  # the variance of the strata's totals from the pooled spread, together
    borrowed = 0.0  # ... and of those that borrow the whole sample's variance
    census = True
    for name, size in population.items():
        values = samples[name]
        taken = len(values)
        if taken == 0:
            total += size * mean
            census = census and size == 0
            if size and overall is not None:
                borrowed += size * size * overall * (1 + 1 / n)
            continue
        level = statistics.fmean(values)
        total += size * level
        if taken >= size:
            continue
        census = False
        scale = size * size * (1 - taken / size) / taken
        from_pool = pooled_cv2 * level * level
        own = statistics.variance(values) if taken >= 2 else 0.0
        if own > from_pool:
            parts.append((scale * own, taken - 1))
        elif from_pool > 0:
            pooled += scale * from_pool
        elif overall is not None:
            borrowed += scale * overall
    if census:
        return Estimate(total, total, total)
    if overall is None:
        return Estimate(total, None, None, "no interval from a pilot of one")
    parts += [(pooled, pooled_df), (borrowed, n - 1)]
    parts = [(part, dof) for part, dof in parts if part > 0]
    variance = sum(part for part, _ in parts)
    if variance <= 0:
        return Estimate(
            total, None, None, f"no interval: all {n} pilot attempts cost the same, no spread seen"
        )
    df = variance**2 / sum(part**2 / dof for part, dof in parts)
    half = _t975(max(1, math.floor(df))) * math.sqrt(variance)
    return Estimate(total, max(spent, total - half), total + half)


def forecast(
    costs: Sequence[float],
    durations: Sequence[float],
    planned: int,
    concurrency: int,
    pilot_wall_sec: float,
    strata: Sequence[str] | None = None,
    population: Mapping[str, int] | None = None,
) -> Forecast:
    """The whole run's cost and wall time from the pilot's attempts (their costs and durations,
    and the stratum of each, in `population`'s strata; without strata, one stratum)."""
    if strata is None or population is None:
        strata, population = [""] * len(costs), {"": planned}

    def grouped(values: Sequence[float]) -> dict[str, list[float]]:
        groups: dict[str, list[float]] = {}
        for name, value in zip(strata, values, strict=True):
            groups.setdefault(name, []).append(value)
        return groups

    cost = forecast_stratified(grouped(costs), population)
    remaining = max(0, planned - len(durations))
    lanes = max(1, min(concurrency, remaining)) if remaining else 1
    rest = forecast_stratified(grouped(durations), population)
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
        wall_sec=Estimate(value, wall(rest.low), wall(rest.high), rest.note),
        concurrency=concurrency,
        strata=len([name for name, size in population.items() if size]),
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
    strata: dict[str, str] = field(default_factory=dict)  # scenario id -> its stratum (pilot)
    population: dict[str, int] = field(default_factory=dict)  # planned attempts by stratum
    ledger: RunSpend = field(init=False)  # the run's spend, shared with its attempts' bridges
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

    def __post_init__(self) -> None:
        self.ledger = RunSpend(self.budget_usd)

    @property
    def spent_usd(self) -> float:
        """What the run's finished tries recorded (agent and judge)."""
        return self.ledger.settled_usd

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
                spent = self.ledger.spent_usd()
                projected = self.spent_usd + (running() + 1) * (mean or 0.0)
                if spent >= self.budget_usd:
                    self.stop_reason = f"budget ${self.budget_usd:g} reached: ${spent:.4f} spent"
                    return False
                if projected > self.budget_usd:
                    self.stop_reason = (
                        f"budget ${self.budget_usd:g} reached: ${spent:.4f} spent, the "
                        f"next attempt would bring it to about ${projected:.4f}"
                    )
                    return False
            self.started += 1
            return True

    def finished_try(self, record: AttemptRecord) -> None:
        key = (record.scenario_id, record.epoch)
        cost = try_cost(record)
        self.ledger.settle(record.id, cost)
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
            stratified = bool(self.population)
            self.forecast = forecast(
                [self.attempt_costs[k] for k in finals],
                [self.attempt_secs[k] for k in finals],
                self.planned,
                self.concurrency,
                time.monotonic() - self._clock,
                [self.strata.get(k[0], "") for k in finals] if stratified else None,
                self.population if stratified else None,
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
