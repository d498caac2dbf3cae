"""The pilot's forecast and the budget's decisions, by hand."""

from __future__ import annotations

import asyncio
import math
import statistics

import pytest

from benchyard.runner.spend import SpendGate, forecast, forecast_total, pilot_order
from tests.support import attempt_record


def test_forecast_of_a_total_by_hand() -> None:
    sample = [1.0, 2.0, 3.0, 4.0]
    estimate = forecast_total(sample, 8)
    half = 3.182 * 8 * statistics.stdev(sample) * math.sqrt((1 - 4 / 8) / 4)
    assert estimate.value == pytest.approx(20.0)
    assert estimate.high == pytest.approx(20.0 + half)
    assert estimate.low == pytest.approx(max(10.0, 20.0 - half))  # never below the sample itself


def test_a_census_has_no_uncertainty_and_a_pilot_of_one_no_interval() -> None:
    whole = forecast_total([1.0, 3.0], 2)
    assert (whole.value, whole.low, whole.high) == (4.0, 4.0, 4.0)
    one = forecast_total([2.0], 10)
    assert (one.value, one.low, one.high) == (20.0, None, None)


def test_the_forecast_is_never_below_what_was_spent() -> None:
    assert forecast_total([0.0, 10.0], 3).low == pytest.approx(10.0)


def test_wall_time_at_the_run_s_concurrency() -> None:
    made = forecast([1.0, 1.0], [10.0, 10.0], planned=10, concurrency=4, pilot_wall_sec=10.0)
    # 8 attempts of 10 s left on 4 lanes: 20 s after the pilot's 10 s
    assert made.wall_sec.value == pytest.approx(30.0)
    assert made.cost_usd.value == pytest.approx(10.0)
    assert "forecast for the whole run: $10.0000" in made.describe()


def test_pilot_order_puts_a_seeded_sample_first() -> None:
    plan = list(range(10))
    ordered = pilot_order(plan, 3, seed=7)
    assert ordered == pilot_order(plan, 3, seed=7)
    assert sorted(ordered) == plan
    assert ordered[3:] == [item for item in plan if item not in ordered[:3]]
    assert pilot_order(plan, 20) == plan


def finished(gate: SpendGate, index: int, cost: float, *, superseded: bool = False) -> None:
    gate.finished_try(
        attempt_record("r", f"a{index}", f"s{index}", cost_usd=cost, superseded=superseded)
    )


async def test_budget_stops_before_the_attempt_that_would_pass_it() -> None:
    gate = SpendGate(planned=10, concurrency=1, budget_usd=0.35)
    started = 0
    while await gate.before_start(lambda: 0):
        finished(gate, started, 0.10)
        started += 1
    assert started == 3  # 0.30 spent; a fourth would reach 0.40
    assert gate.stop_reason is not None and "budget $0.35 reached" in gate.stop_reason


async def test_budget_counts_retried_tries_and_the_judge() -> None:
    gate = SpendGate(planned=10, concurrency=1, budget_usd=0.25)
    assert await gate.before_start(lambda: 0)
    finished(gate, 0, 0.10, superseded=True)
    gate.finished_try(
        attempt_record("r", "a0b", "s0", cost_usd=0.05, judge_cost_usd=0.05, try_number=2)
    )
    assert gate.spent_usd == pytest.approx(0.20)
    assert not await gate.before_start(lambda: 0)  # 0.20 + 0.20 > 0.25


async def test_under_a_budget_the_first_attempt_runs_alone() -> None:
    gate = SpendGate(planned=5, concurrency=3, budget_usd=10.0)
    running = [0]
    assert await gate.before_start(lambda: running[0])
    running[0] = 1
    second = asyncio.ensure_future(gate.before_start(lambda: running[0]))
    await asyncio.sleep(0)
    assert not second.done()  # nothing known of the cost yet
    running[0] = 0
    finished(gate, 0, 1.0)
    assert await second


async def test_the_pilot_waits_then_forecasts() -> None:
    gate = SpendGate(planned=6, concurrency=2, pilot=2)
    forecasts = []
    gate.on_forecast(forecasts.append)
    assert await gate.before_start(lambda: 0)
    assert await gate.before_start(lambda: 1)
    third = asyncio.ensure_future(gate.before_start(lambda: 2))
    await asyncio.sleep(0)
    assert not third.done()
    finished(gate, 0, 0.10)
    finished(gate, 1, 0.30)
    assert await third
    assert gate.forecast is not None and forecasts == [gate.forecast]
    assert gate.forecast.cost_usd.value == pytest.approx(6 * 0.20)


async def test_pilot_only_stops_after_the_pilot() -> None:
    gate = SpendGate(planned=6, concurrency=1, pilot=1, pilot_only=True)
    assert await gate.before_start(lambda: 0)
    finished(gate, 0, 0.1)
    assert not await gate.before_start(lambda: 0)
    assert gate.stop_reason == "pilot only: 1 of 6 attempts ran"
