"""Statistics for reports and comparisons: Wilson intervals, percentiles, the exact McNemar test
(and whether one direction of the discordant pairs is significant), and an interval for a paired
difference of proportions (accuracies, error rates)."""

from __future__ import annotations

import math
from collections.abc import Sequence

Z_95 = 1.959963984540054


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
