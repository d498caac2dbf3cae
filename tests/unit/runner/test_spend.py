"""The pilot's forecast and the budget's decisions, by hand."""

from __future__ import annotations

import asyncio
import math
import random
import statistics
import threading

import pytest

from benchyard.bridge.ledger import RunSpend
from benchyard.runner.spend import (
    SpendGate,
    forecast,
    forecast_stratified,
    forecast_total,
    pilot_order,
)
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


async def test_the_gate_counts_what_running_attempts_spend_through_their_bridges() -> None:
    gate = SpendGate(planned=10, concurrency=2, budget_usd=1.0)
    assert await gate.before_start(lambda: 0)
    finished(gate, 0, 0.10)
    assert await gate.before_start(lambda: 0)
    tab = gate.ledger.tab("a1")  # attempt a1's bridge
    assert tab.charge(0.50) == pytest.approx(0.60) and not tab.passed(0.60)
    assert not tab.exhausted()
    assert tab.charge(0.45) == pytest.approx(1.05) and tab.passed(1.05) and tab.exhausted()
    # 0.10 + 2 x 0.10 projected is under $1, but the running attempt has spent it already
    assert not await gate.before_start(lambda: 1)
    assert gate.stop_reason == "budget $1 reached: $1.0500 spent"
    finished(gate, 1, 0.95)  # its record replaces what its bridge counted
    assert gate.spent_usd == pytest.approx(1.05) == gate.ledger.spent_usd()


def test_the_ledger_loses_no_charge_across_threads() -> None:
    ledger = RunSpend(budget_usd=None)

    def charge(index: int) -> None:
        tab = ledger.tab(f"t{index}")
        for _ in range(1000):
            tab.charge(0.001)

    threads = [threading.Thread(target=charge, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ledger.spent_usd() == pytest.approx(8.0)
    assert not ledger.tab("t0").exhausted()  # no budget: never spent


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


# ---- the stratified pilot (issue 22, item 9) ---------------------------------------------------


def test_the_stratified_pilot_draws_from_every_stratum() -> None:
    plan = [("easy", i) for i in range(160)] + [("hard", i) for i in range(25)]
    plan += [("long", i) for i in range(15)]
    for seed in range(20):
        pilot = pilot_order(plan, 6, seed, stratum=lambda item: item[0])[:6]
        counted = {name: sum(1 for item in pilot if item[0] == name) for name in ("easy", "hard")}
        assert counted == {"easy": 2, "hard": 2}  # two each while there is room for two each
    assert {item[0] for item in pilot_order(plan, 10, 3, stratum=lambda i: i[0])[:10]} == {
        "easy",
        "hard",
        "long",
    }
    assert len({item[0] for item in pilot_order(plan, 2, 3, stratum=lambda i: i[0])[:2]}) == 2


def test_one_price_per_category_never_gives_a_zero_width_interval() -> None:
    """The issue's case: a simple random pilot that drew only the cheap category forecast with a
    zero-width interval; the stratified one sees every category and its interval holds the
    truth with a width, whatever the seed."""
    costs = {"easy": 0.02, "hard": 0.08, "long": 0.20}
    population = {"easy": 160, "hard": 25, "long": 15}
    plan = [name for name, size in population.items() for _ in range(size)]
    real = sum(costs[name] * size for name, size in population.items())
    for seed in range(30):
        pilot = pilot_order(plan, 8, seed, stratum=str)[:8]
        observed: dict[str, list[float]] = {}
        for name in pilot:
            observed.setdefault(name, []).append(costs[name])
        estimate = forecast_stratified(observed, population)
        assert estimate.low is not None and estimate.high is not None
        assert estimate.low <= real <= estimate.high and estimate.high > estimate.low


def test_the_interval_covers_at_about_its_rate_over_simulated_runs() -> None:
    """Costs lognormal within categories whose levels differ 10x; 300 seeded pilots of 10: the
    95% interval holds the real total in at least 90% of them (bench/pilot.py measures more)."""
    rng = random.Random(7)
    held = 0
    for run in range(300):
        levels = {"a": 0.01, "b": 0.03, "c": 0.1}
        population = [
            (name, levels[name] * rng.lognormvariate(0, 0.5))
            for name, size in (("a", 60), ("b", 30), ("c", 10))
            for _ in range(size)
        ]
        pilot = pilot_order(population, 10, run, stratum=lambda item: item[0])[:10]
        observed: dict[str, list[float]] = {}
        for name, cost in pilot:
            observed.setdefault(name, []).append(cost)
        estimate = forecast_stratified(observed, {"a": 60, "b": 30, "c": 10})
        assert estimate.low is not None and estimate.high is not None
        held += estimate.low <= sum(cost for _, cost in population) <= estimate.high
    assert held / 300 >= 0.90


def test_a_stratum_seen_once_or_not_at_all_widens_the_interval() -> None:
    both = forecast_stratified({"a": [1.0, 2.0, 1.5], "b": [3.0, 4.0]}, {"a": 10, "b": 10})
    once = forecast_stratified({"a": [1.0, 2.0, 1.5], "b": [3.5]}, {"a": 10, "b": 10})
    never = forecast_stratified({"a": [1.0, 2.0, 1.5]}, {"a": 10, "b": 10})
    for estimate in (both, once, never):
        assert estimate.low is not None and estimate.high is not None
    assert both.value == pytest.approx(10 * 1.5 + 10 * 3.5)
    assert once.value == pytest.approx(both.value)
    assert never.value == pytest.approx(20 * 1.5)
    assert never.high - never.low > both.high - both.low  # type: ignore[operator]


def test_a_pilot_whose_attempts_all_cost_the_same_has_no_interval_but_says_why() -> None:
    same = forecast_stratified({"a": [0.5, 0.5, 0.5]}, {"a": 10})
    assert (same.value, same.low, same.high) == (5.0, None, None)
    assert same.note is not None and "cost the same" in same.note
    census = forecast_stratified({"a": [0.5, 0.5]}, {"a": 2})
    assert (census.low, census.high) == (1.0, 1.0)


async def test_the_gate_forecasts_by_stratum() -> None:
    gate = SpendGate(
        planned=20,
        concurrency=1,
        pilot=4,
        strata={"s0": "x", "s1": "x", "s2": "y", "s3": "y"},
        population={"x": 10, "y": 10},
    )
    for index, cost in enumerate((0.1, 0.2, 1.0, 1.2)):
        assert await gate.before_start(lambda: 0)
        finished(gate, index, cost)
    assert gate.forecast is not None and gate.forecast.strata == 2
    assert gate.forecast.cost_usd.value == pytest.approx(10 * 0.15 + 10 * 1.1)
    assert "(drawn from 2 strata)" in gate.forecast.describe()
