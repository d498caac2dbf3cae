"""Statistics for reports and comparisons: Wilson intervals, percentiles, the exact McNemar test
(and whether one direction of the discordant pairs is significant), an interval for a paired
difference of proportions (accuracies, error rates), the cluster-robust mean and test used when
epochs make several attempts of one scenario, and the minimum detectable effect."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z_95 = 1.959963984540054  # two-sided alpha 0.05
Z_POWER_80 = 0.8416212335729143  # one-sided 0.2: power 0.8


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval of a binomial proportion; None when there are no trials."""
    if trials == 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation between closest ranks."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def mcnemar_exact(pass_to_fail: int, fail_to_pass: int) -> float:
    """Two-sided exact McNemar p-value on the discordant pairs: under no change, each discordant
    pair is a fair coin, so the smaller count is Binomial(b + c, 1/2); 1.0 when there are none."""
    discordant = pass_to_fail + fail_to_pass
    if discordant == 0:
        return 1.0
    # P(X <= smaller) in exact integers: C(n, i + 1) = C(n, i) * (n - i) / (i + 1), and one
    # correctly rounded division at the end (2**n overflows a float past n = 1023).
    term = tail = 1
    for i in range(min(pass_to_fail, fail_to_pass)):
        term = term * (discordant - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / (1 << discordant))


def significantly_more(more: int, than: int, alpha: float) -> bool:
    """Whether discordant pairs went one way (`more` of them than `than` the other way) beyond
    chance: more > than and the exact McNemar p-value below `alpha`."""
    return more > than and mcnemar_exact(more, than) < alpha


def paired_difference_interval(
    both_pass: int, pass_to_fail: int, fail_to_pass: int, both_fail: int, z: float = Z_95
) -> tuple[float, float] | None:
    """Interval for (after - before) accuracy on paired outcomes: Newcombe's hybrid score method
    (1998, method 10), built from the two Wilson intervals and the pairs' phi correlation."""
    n = both_pass + pass_to_fail + fail_to_pass + both_fail
    before_interval = wilson_interval(both_pass + pass_to_fail, n, z)
    after_interval = wilson_interval(both_pass + fail_to_pass, n, z)
    if before_interval is None or after_interval is None:
        return None
    before, after = (both_pass + pass_to_fail) / n, (both_pass + fail_to_pass) / n
    margins = (
        (before_interval[1] - before, after - after_interval[0]),  # lower end of after - before
        (before - before_interval[0], after_interval[1] - after),  # upper end
    )
    phi = _phi(both_pass, pass_to_fail, fail_to_pass, both_fail)
    down, up = (math.sqrt(max(0.0, x * x - 2 * phi * x * y + y * y)) for x, y in margins)
    delta = after - before
    return max(-1.0, delta - down), min(1.0, delta + up)


def _phi(a: int, b: int, c: int, d: int) -> float:
    denominator = (a + b) * (c + d) * (a + c) * (b + d)
    return (a * d - b * c) / math.sqrt(denominator) if denominator else 0.0


def ratio(numerator: float, denominator: int) -> float | None:
    """numerator / denominator, or None when there is nothing to divide by."""
    return numerator / denominator if denominator else None


@dataclass(frozen=True)
class ClusteredMean:
    """A mean over units grouped in clusters (a scenario's epochs), with its cluster-robust
    standard error: the units of one cluster are not taken as independent."""

    estimate: float
    standard_error: float
    clusters: int
    units: int

    def interval(
        self, z: float = Z_95, low: float = -1.0, high: float = 1.0
    ) -> tuple[float, float]:
        half = z * self.standard_error
        return max(low, self.estimate - half), min(high, self.estimate + half)

    def p_value(self) -> float:
        """Two-sided p-value of the Wald test of a zero mean (normal approximation)."""
        if self.standard_error == 0:
            return 1.0 if self.estimate == 0 else 0.0
        return math.erfc(abs(self.estimate) / self.standard_error / math.sqrt(2))


def clustered_mean(clusters: Sequence[tuple[float, int]]) -> ClusteredMean | None:
    """The mean of units given as (sum, count) per cluster, Σ sums / Σ counts, with the
    cluster-robust (sandwich) variance and the small-sample factor k / (k - 1):
    Var = k / (k - 1) · Σ (sum_i - mean · count_i)² / (Σ counts)². None with fewer than two
    clusters (no variance between clusters to estimate)."""
    used = [(total, count) for total, count in clusters if count > 0]
    units = sum(count for _, count in used)
    if len(used) < 2:
        return None
    mean = sum(total for total, _ in used) / units
    k = len(used)
    spread = sum((total - mean * count) ** 2 for total, count in used)
    return ClusteredMean(mean, math.sqrt(k / (k - 1) * spread) / units, k, units)


def clustered_proportion_interval(
    clusters: Sequence[tuple[int, int]], z: float = Z_95
) -> tuple[float, float] | None:
    """An interval for a proportion (passed / counted) whose trials come in clusters (the epochs
    of each scenario): the cluster-robust normal interval, within [0, 1]."""
    mean = clustered_mean(clusters)
    return None if mean is None else mean.interval(z, 0.0, 1.0)


def minimum_detectable_effect(standard_error: float) -> float | None:
    """The smallest true difference a two-sided test at alpha 0.05 finds with power 0.8, for a
    test whose estimate has this standard error (normal approximation):
    (z_0.975 + z_0.8) · SE = 2.8016 · SE. None when the standard error is 0: the runs showed no
    variation to size it by."""
    return (Z_95 + Z_POWER_80) * standard_error if standard_error > 0 else None


def mcnemar_standard_error(pass_to_fail: int, fail_to_pass: int, pairs: int) -> float:
    """The standard error of the paired difference under McNemar's null: sqrt(b + c) / n."""
    return math.sqrt(pass_to_fail + fail_to_pass) / pairs if pairs else 0.0
