"""Repeated attempts (epochs > 1): pass@k and pass^k per scenario, averaged over scenarios.

With n counted attempts of a scenario of which c passed, the unbiased estimators are
pass@k = 1 - C(n-c, k) / C(n, k) (at least one of k attempts passes) and
pass^k = C(c, k) / C(n, k) (all k attempts pass).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from math import comb

from benchyard.report.model import PassAtK, RepeatedAttempts, ScenarioSuccesses
from benchyard.runner.failures import COUNTED_VERDICTS
from benchyard.store.records import AttemptRecord


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k attempts drawn from n (c of them passed) passes."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all k attempts drawn from n (c of them passed) pass."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def repeated_attempts(attempts: Iterable[AttemptRecord]) -> RepeatedAttempts | None:
    """Per-scenario success counts and pass@k / pass^k for k = 1..n; None with one epoch.

    Errors are not counted (as in accuracy); each k averages over the scenarios with at least k
    counted attempts."""
    epochs: dict[str, int] = defaultdict(int)
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for attempt in attempts:
        epochs[attempt.scenario_id] += 1
        if attempt.verdict in COUNTED_VERDICTS:
            tally = counts[attempt.scenario_id]
            tally[0] += attempt.verdict == "passed"
            tally[1] += 1
    return repeated_from_tallies(epochs, counts)


def repeated_from_tallies(
    epochs: Mapping[str, int], counts: Mapping[str, Sequence[int]]
) -> RepeatedAttempts | None:
    """`repeated_attempts` from its tallies: the attempts of each scenario, and (passed,
    counted) of each scenario with a counted attempt."""
    if not epochs or max(epochs.values()) < 2:
        return None
    by_k = []
    for k in range(1, max((n for _, n in counts.values()), default=0) + 1):
        eligible = [(n, c) for c, n in counts.values() if n >= k]
        by_k.append(
            PassAtK(
                k=k,
                pass_at_k=sum(pass_at_k(n, c, k) for n, c in eligible) / len(eligible),
                pass_hat_k=sum(pass_hat_k(n, c, k) for n, c in eligible) / len(eligible),
                scenarios=len(eligible),
            )
        )
    return RepeatedAttempts(
        epochs=max(epochs.values()),
        by_k=by_k,
        scenarios={
            sid: ScenarioSuccesses(successes=c, attempts=n)
            for sid, (c, n) in sorted(counts.items())
        },
    )
