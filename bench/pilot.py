"""How often the pilot's 95% cost interval holds the run's real cost (runner/spend.py).

Simulates runs whose per-attempt costs have category structure (each category's costs around
its own level), draws a pilot from each, forecasts the whole run's cost and checks the interval
against the real total. Two ways side by side, in the same run: the simple random pilot with
one t interval (the old way, the baseline: a pilot whose attempts all cost the same gave a
zero-width interval) and the stratified pilot (a sample from every category, a stratified t
interval). Figures: each way's empirical coverage as a ratio to the 0.95 it states, and the
interval's median width over the real total; medians of interleaved repetitions with their
range (bench/common.py). Populations:

- `lognormal`: 5 categories of unequal sizes (80, 50, 30, 25, 15 attempts), their levels 10x
  apart at most, costs within a category lognormal (sigma 0.5).
- `flat-within`: the same levels, every attempt of a category costing the same (costs scripted
  per category; the case where 3 of 4 pilots forecast with a zero-width interval).
- `sre-apps`: 3 categories x 3 apps, each (category, app) at its own level, sigma 0.3.
- `dominant-flat`: 160 attempts of one category at one price, 25 and 15 dearer ones in two
  others (sigma 0.4): a simple pilot of 10 often sees one price only.

Exits 1 when the stratified interval's median coverage ratio is below 0.95 (0.9025 coverage)
on a population. Run: .venv/bin/python bench/pilot.py [--runs 400] [--repeats 5]
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Callable

from common import interleaved, spread

from benchyard.runner.spend import Estimate, forecast_stratified, pilot_order

Population = list[tuple[str, float]]  # (stratum, cost) per planned attempt


def lognormal(rng: random.Random) -> Population:
    sizes = {"math": 80, "coding": 50, "tools": 30, "logic": 25, "long": 15}
    levels = {name: 0.01 * math.exp(rng.uniform(0, math.log(10))) for name in sizes}
    return [
        (name, levels[name] * rng.lognormvariate(0, 0.5))
        for name, size in sizes.items()
        for _ in range(size)
    ]


def flat_within(rng: random.Random) -> Population:
    sizes = {"math": 80, "coding": 50, "tools": 30, "logic": 25, "long": 15}
    levels = {name: round(0.01 * math.exp(rng.uniform(0, math.log(10))), 4) for name in sizes}
    return [(name, levels[name]) for name, size in sizes.items() for _ in range(size)]


def sre_apps(rng: random.Random) -> Population:
    population = []
    for category in ("latency", "crash", "config"):
        for app in ("shop", "hotel", "social"):
            level = 0.02 * math.exp(rng.uniform(0, math.log(8)))
            population += [
                (f"{category}/{app}", level * rng.lognormvariate(0, 0.3))
                for _ in range(rng.randint(4, 12))
            ]
    return population


def dominant_flat(rng: random.Random) -> Population:
    """Most attempts in one category at one price, a few dearer ones elsewhere."""
    flat = round(0.02 * rng.uniform(0.8, 1.2), 4)
    return (
        [("general", flat)] * 160
        + [("hard", 0.08 * rng.lognormvariate(0, 0.4)) for _ in range(25)]
        + [("long", 0.2 * rng.lognormvariate(0, 0.4)) for _ in range(15)]
    )


POPULATIONS: dict[str, Callable[[random.Random], Population]] = {
    "lognormal": lognormal,
    "flat-within": flat_within,
    "sre-apps": sre_apps,
    "dominant-flat": dominant_flat,
}


def one_pilot(
    population: Population, size: int, seed: int, stratified: bool
) -> tuple[Estimate, float]:
    """A pilot of `size` drawn from the population, its forecast, and the real total."""
    indexes = list(range(len(population)))
    chosen = pilot_order(indexes, size, seed, (lambda i: population[i][0]) if stratified else None)[
        :size
    ]
    strata: dict[str, int] = {}
    for name, _ in population:
        key = name if stratified else ""
        strata[key] = strata.get(key, 0) + 1
    observed: dict[str, list[float]] = {}
    for index in chosen:
        name, cost = population[index]
        observed.setdefault(name if stratified else "", []).append(cost)
    return forecast_stratified(observed, strata), sum(cost for _, cost in population)


def coverage(
    kind: str, size: int, runs: int, stratified: bool, seed: int, widths: list[float]
) -> float:
    """The share of `runs` simulated pilots whose interval holds the real total (a zero-width or
    missing interval holds it only when the estimate is exact)."""
    rng = random.Random(seed)
    held = 0
    for run in range(runs):
        population = POPULATIONS[kind](rng)
        estimate, real = one_pilot(population, size, seed * 100_003 + run, stratified)
        low = estimate.low if estimate.low is not None else estimate.value
        high = estimate.high if estimate.high is not None else estimate.value
        held += low - 1e-9 <= real <= high + 1e-9
        widths.append((high - low) / real)
    return held / runs


def measure(
    kind: str, size: int, runs: int, stratified: bool, widths: list[float]
) -> Callable[[], float]:
    """One repetition's coverage ratio; the k-th repetition of either way simulates the same
    populations (seeded alike), so that the two ways are compared on the same runs."""
    seeds = iter(range(1, 10_000))
    return lambda: coverage(kind, size, runs, stratified, next(seeds), widths) / 0.95


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=400, help="simulated pilots per repetition")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size", type=int, default=10, help="attempts in the pilot")
    args = parser.parse_args()
    failed = False
    print(f"pilot of {args.size}; {args.runs} simulated runs per repetition, {args.repeats} reps")
    for kind in POPULATIONS:
        widths: dict[str, list[float]] = {"simple": [], "stratified": []}
        values = interleaved(
            {
                "simple": measure(kind, args.size, args.runs, False, widths["simple"]),
                "stratified": measure(kind, args.size, args.runs, True, widths["stratified"]),
            },
            args.repeats,
        )
        for name, ratios in values.items():
            print(
                f"{kind:13} {name:10} coverage / 0.95: {spread(ratios)}; "
                f"median width / real total: {statistics.median(widths[name]):.3g}"
            )
        if statistics.median(values["stratified"]) < 0.95:
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
