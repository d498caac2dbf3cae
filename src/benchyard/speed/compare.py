"""Comparing speed runs: the first is the baseline; for each later run, each figure's ratio of
medians with a bootstrap interval over the measured calls. Runs measured with different prompt
lengths, reply budgets or sweeps are refused unless asked for (their figures are not alike)."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from typing import Literal

from benchyard.report.compare import CompareRefused
from benchyard.report.stats import percentile
from benchyard.speed.figures import measured
from benchyard.speed.models import (
    RatioInterval,
    Sample,
    SpeedCandidate,
    SpeedComparison,
    SpeedDelta,
    SpeedOptions,
    options_of,
)
from benchyard.speed.records import load_samples
from benchyard.speed.report import build_speed_report, is_speed
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

RESAMPLES = 2000
Better = Literal["higher", "lower"]


def compare_speed_runs(
    store: Store, runs: Sequence[RunRecord], *, allow_mismatch: bool = False
) -> SpeedComparison:
    if len(runs) < 2:
        raise CompareRefused("give at least two runs: a baseline and a run to compare with it")
    other = [run for run in runs if not is_speed(run)]
    if other:
        raise CompareRefused(
            f"run {other[0].id[:8]} is a benchmark run and the others are speed runs: compare "
            "speed runs with speed runs; `benchyard report` puts both side by side"
        )
    if not allow_mismatch:
        for run in runs[1:]:
            if run.benchmark_hash != runs[0].benchmark_hash:
                raise CompareRefused(
                    f"speed run {run.id[:8]} was measured differently from {runs[0].id[:8]} "
                    "(prompt lengths, max_tokens, concurrency levels or --same-prompt differ): "
                    "compare them anyway with --allow-version-mismatch"
                )
    reports = [build_speed_report(store, run) for run in runs]
    samples = [load_samples(store, run.id) for run in runs]
    baseline_options = options_of(runs[0].settings)
    return SpeedComparison(
        baseline=reports[0].run,
        baseline_confidence=reports[0].confidence,
        candidates=[
            SpeedCandidate(
                run=report.run,
                confidence=report.confidence,
                deltas=_deltas(baseline_options, samples[0], options_of(run.settings), theirs),
            )
            for run, report, theirs in zip(runs[1:], reports[1:], samples[1:], strict=True)
        ],
    )


def _deltas(
    base_options: SpeedOptions,
    base: list[Sample],
    options: SpeedOptions,
    theirs: list[Sample],
) -> list[SpeedDelta]:
    deltas = []
    for label in base_options.lengths:
        if label not in options.lengths:
            continue
        mine, other = measured(base, "length", label), measured(theirs, "length", label)
        figures: list[tuple[str, Better, Callable[[Sample], float | None]]] = [
            (f"TTFT ms ({label})", "lower", _ttft),
            (f"decode tok/s ({label})", "higher", _decode),
            (f"prefill tok/s ({label})", "higher", _prefill),
        ]
        for figure, better, value in figures:
            deltas.append(
                SpeedDelta(figure=figure, better=better, values=_ratio(mine, other, value))
            )
    for level in base_options.concurrency:
        if level not in options.concurrency:
            continue
        mine = measured(base, "concurrency", f"c{level}")
        other = measured(theirs, "concurrency", f"c{level}")
        deltas.append(
            SpeedDelta(
                figure=f"decode tok/s per call at concurrency {level}",
                better="higher",
                values=_ratio(mine, other, _decode),
            )
        )
    return deltas


def _ttft(sample: Sample) -> float | None:
    return sample.ttft_sec


def _decode(sample: Sample) -> float | None:
    return sample.decode_tps


def _prefill(sample: Sample) -> float | None:
    return sample.prefill_tps


def _ratio(
    base: list[Sample], other: list[Sample], value: Callable[[Sample], float | None]
) -> RatioInterval:
    a = [v for v in (value(s) for s in base if s.error is None) if v is not None]
    b = [v for v in (value(s) for s in other if s.error is None) if v is not None]
    if not a or not b:
        return RatioInterval(
            baseline=statistics.median(a) if a else None,
            candidate=statistics.median(b) if b else None,
            ratio=None,
            ratio_ci95=None,
        )
    base_median, other_median = statistics.median(a), statistics.median(b)
    return RatioInterval(
        baseline=base_median,
        candidate=other_median,
        ratio=other_median / base_median if base_median else None,
        ratio_ci95=bootstrap_ratio(a, b),
    )


def bootstrap_ratio(a: list[float], b: list[float]) -> tuple[float, float] | None:
    """A 95% percentile-bootstrap interval of median(b) / median(a), seeded (reproducible)."""
    if len(a) < 2 or len(b) < 2:
        return None
    chooser = random.Random(0)
    ratios = []
    for _ in range(RESAMPLES):
        base = statistics.median(chooser.choices(a, k=len(a)))
        if base <= 0:
            continue
        ratios.append(statistics.median(chooser.choices(b, k=len(b))) / base)
    low, high = percentile(ratios, 2.5), percentile(ratios, 97.5)
    return None if low is None or high is None else (low, high)
