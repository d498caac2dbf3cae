"""Wilson, McNemar, the paired-difference interval, the cluster-robust mean and interval, the
minimum detectable effect, pass@k and pass^k against hand-computed values."""

from __future__ import annotations

import pytest

from benchyard.report.passk import pass_at_k, pass_hat_k
from benchyard.report.stats import (
    clustered_mean,
    clustered_proportion_interval,
    mcnemar_exact,
    mcnemar_standard_error,
    minimum_detectable_effect,
    paired_difference_interval,
    wilson_interval,
)


def test_wilson_interval_by_hand() -> None:
    # 40/50: centre (0.8 + z²/100) / (1 + z²/50) = 0.778596, half-width 0.108966
    assert wilson_interval(40, 50) == pytest.approx((0.669630, 0.887562), abs=2e-6)
    # 32/50: centre 0.630011, half-width 0.128601
    assert wilson_interval(32, 50) == pytest.approx((0.501410, 0.758612), abs=2e-6)


@pytest.mark.parametrize(
    ("pass_to_fail", "fail_to_pass", "p_value"),
    [
        (10, 2, 2 * (1 + 12 + 66) / 4096),  # 2 * P(Binomial(12, 1/2) <= 2) = 0.0385742
        (2, 10, 2 * (1 + 12 + 66) / 4096),  # two-sided: symmetric
        (1, 9, 2 * (1 + 10) / 1024),  # 0.0214844
        (3, 5, 2 * (1 + 8 + 28 + 56) / 256),  # 0.7265625
        (4, 4, 1.0),  # capped at 1
        (0, 0, 1.0),  # no discordant pair: no evidence of change
        (0, 6, 2 / 64),  # 0.03125: six flips one way
    ],
)
def test_exact_mcnemar_by_hand(pass_to_fail: int, fail_to_pass: int, p_value: float) -> None:
    assert mcnemar_exact(pass_to_fail, fail_to_pass) == pytest.approx(p_value, abs=1e-12)


def test_paired_difference_interval_by_hand() -> None:
    # 50 pairs: 30 both pass, 10 pass->fail, 2 fail->pass, 8 both fail; accuracy 0.80 -> 0.64.
    # phi = (30*8 - 10*2) / sqrt(40*10*32*18) = 220/480. With the Wilson bounds above:
    # lower = -0.16 - sqrt(0.087562² - 2*phi*0.087562*0.138590 + 0.138590²) = -0.285500
    # upper = -0.16 + sqrt(0.130370² - 2*phi*0.130370*0.118612 + 0.118612²) = -0.030036
    assert paired_difference_interval(30, 10, 2, 8) == pytest.approx((-0.2855, -0.030036), abs=1e-5)
    assert paired_difference_interval(0, 0, 0, 0) is None
    low, high = paired_difference_interval(20, 0, 0, 0) or (None, None)
    assert low is not None and high is not None
    assert low < 0 < high  # no change: the interval holds 0


@pytest.mark.parametrize(
    ("n", "c", "k", "at_k", "hat_k"),
    [
        (5, 2, 1, 2 / 5, 2 / 5),  # k = 1: both are the pass rate
        (5, 2, 2, 1 - 3 / 10, 1 / 10),  # 1 - C(3,2)/C(5,2); C(2,2)/C(5,2)
        (5, 2, 3, 1 - 1 / 10, 0.0),  # 1 - C(3,3)/C(5,3); C(2,3) = 0
        (4, 3, 2, 1.0, 3 / 6),  # C(1,2) = 0; C(3,2)/C(4,2)
        (3, 1, 3, 1.0, 0.0),  # every draw of 3 holds the one success
        (3, 3, 3, 1.0, 1.0),
        (4, 0, 2, 0.0, 0.0),
    ],
)
def test_pass_at_k_and_pass_hat_k_by_hand(
    n: int, c: int, k: int, at_k: float, hat_k: float
) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(at_k)
    assert pass_hat_k(n, c, k) == pytest.approx(hat_k)


def test_pass_at_k_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError, match="k <= n"):
        pass_at_k(3, 1, 4)
    with pytest.raises(ValueError, match="c <= n"):
        pass_hat_k(3, 4, 1)


def test_clustered_mean_by_hand() -> None:
    # 10 scenarios of 3 paired epochs: sums of (after - before) per scenario -3, -3, -3, +3, then
    # 0 six times. Mean -6/30 = -0.2; residuals D - mean*3 = -2.4 (x3), 3.6, 0.6 (x6), squares
    # 17.28 + 12.96 + 2.16 = 32.4; Var = 10/9 * 32.4 / 30^2 = 0.04, SE 0.2.
    mean = clustered_mean([(-3, 3)] * 3 + [(3, 3)] + [(0, 3)] * 6)
    assert mean is not None
    assert (mean.estimate, mean.standard_error) == pytest.approx((-0.2, 0.2))
    assert (mean.clusters, mean.units) == (10, 30)
    # -0.2 -/+ 1.959964 * 0.2
    assert mean.interval() == pytest.approx((-0.591993, 0.191993), abs=1e-6)
    assert mean.p_value() == pytest.approx(0.317311, abs=1e-6)  # 2 * (1 - Phi(1))
    assert minimum_detectable_effect(mean.standard_error) == pytest.approx(0.560317, abs=1e-6)
    assert clustered_mean([(3, 3)]) is None  # one scenario: no spread between scenarios


def test_clustered_proportion_interval_by_hand() -> None:
    # 21/30 passed: 3 scenarios 0/3, 7 scenarios 3/3. Residuals y - 0.7*3: -2.1 (x3), 0.9 (x7);
    # squares 13.23 + 5.67 = 18.9; Var = 10/9 * 18.9 / 900 = 0.0233333, SE 0.152753.
    clustered = clustered_proportion_interval([(0, 3)] * 3 + [(3, 3)] * 7)
    assert clustered == pytest.approx((0.400611, 0.999389), abs=1e-6)
    wilson = wilson_interval(21, 30)
    assert wilson is not None and clustered is not None
    # the epochs agree within each scenario: 10 independent cases, not 30, so it is wider
    assert clustered[1] - clustered[0] > wilson[1] - wilson[0]


def test_mcnemar_minimum_detectable_effect_by_hand() -> None:
    # 10 pairs, 2 pass -> fail, 3 fail -> pass: SE sqrt(5)/10 = 0.223607, times 2.801585
    assert minimum_detectable_effect(mcnemar_standard_error(2, 3, 10)) == pytest.approx(
        0.626453, abs=1e-6
    )
    assert minimum_detectable_effect(mcnemar_standard_error(0, 0, 10)) is None  # nothing varied


# Against the reference implementations, computed with statsmodels 0.15.0 and scipy 1.17.1 (neither
# is a dependency: their outputs are written here, with the calls that gave them).


@pytest.mark.parametrize(
    ("pass_to_fail", "fail_to_pass", "p_value"),
    [
        # statsmodels.stats.contingency_tables.mcnemar([[10, b], [c, 10]], exact=True).pvalue
        (1, 9, 0.021484375),
        (7, 2, 0.1796875),
        (0, 5, 0.0625),
        (13, 13, 1.0),
        (9, 3, 0.14599609375),  # = scipy.stats.binomtest(3, 12, 0.5).pvalue
    ],
)
def test_exact_mcnemar_as_statsmodels_0_15_mcnemar_exact(
    pass_to_fail: int, fail_to_pass: int, p_value: float
) -> None:
    assert mcnemar_exact(pass_to_fail, fail_to_pass) == pytest.approx(p_value, abs=1e-15)


def test_clustered_mean_as_statsmodels_0_15_ols_cluster_robust() -> None:
    # Seven scenarios with unequal epochs, paired differences (-1, 0, +1) per epoch:
    # [-1,-1], [0,0,0,1], [1], [0,-1,0], [1,1,1], [0], [-1,0,1,0,0]. statsmodels:
    # OLS(d, ones).fit(cov_type="cluster", cov_kwds={"groups": scenario}) (normal, G/(G-1))
    # gives params 0.10526316, bse 0.22197569, conf_int [-0.32980119, 0.54032751],
    # pvalues 0.63534994.
    mean = clustered_mean([(-2, 2), (1, 4), (1, 1), (-1, 3), (3, 3), (0, 1), (0, 5)])
    assert mean is not None
    assert mean.estimate == pytest.approx(0.10526315789473688, abs=1e-12)
    assert mean.standard_error == pytest.approx(0.22197568533801262, abs=1e-12)
    assert mean.interval() == pytest.approx((-0.3298011908113636, 0.5403275066008374), abs=1e-9)
    assert mean.p_value() == pytest.approx(0.6353499441268423, abs=1e-9)
    # test_compare_epochs' pair, the same way: bse 0.2, conf_int [-0.5919928, 0.1919928]
    pair = clustered_mean([(-3, 3)] * 3 + [(3, 3)] + [(0, 3)] * 6)
    assert pair is not None
    assert pair.interval() == pytest.approx((-0.5919928, 0.1919928), abs=1e-7)
    assert pair.p_value() == pytest.approx(0.31731050786291404, abs=1e-9)
    # a pass rate 21/30 in 10 scenarios (3 at 0/3, 7 at 3/3): conf_int [0.40061056, 0.99938944]
    assert clustered_proportion_interval([(0, 3)] * 3 + [(3, 3)] * 7) == pytest.approx(
        (0.40061056, 0.99938944), abs=1e-8
    )


def test_wilson_interval_as_statsmodels_0_15_proportion_confint_wilson() -> None:
    # statsmodels.stats.proportion.proportion_confint(k, n, method="wilson")
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.27753279986288926), abs=1e-12)
    assert wilson_interval(7, 10) == pytest.approx((0.39677814746114537, 0.8922087325936989))
    assert wilson_interval(21, 30) == pytest.approx((0.5212421254128503, 0.833352517317562))


def test_minimum_detectable_effect_as_scipy_1_17_normal_quantiles() -> None:
    # (norm.ppf(0.975) + norm.ppf(0.8)) * SE, power 0.8 at a two-sided alpha of 0.05:
    # 2.8015852181129683 * SE (statsmodels' NormalIndPower().solve_power, which also counts the
    # far tail, gives 2.80157 per unit of SE: the same to 2e-5)
    assert minimum_detectable_effect(1.0) == pytest.approx(2.8015852181129683, abs=1e-9)
    assert minimum_detectable_effect(0.2) == pytest.approx(0.5603170436225937, abs=1e-9)
    assert minimum_detectable_effect(mcnemar_standard_error(2, 0, 10)) == pytest.approx(
        0.3962039811599346, abs=1e-9
    )
