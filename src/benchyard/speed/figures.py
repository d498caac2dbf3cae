"""Figures from a speed run's samples: per prompt length (time to first token, split into reasoning
and answer; decode and prefill speed), prefill from a line through the lengths, and each
concurrency level's aggregate throughput. Warm-up calls and the cache probe are left out."""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable, Sequence

from benchyard.report.stats import percentile
from benchyard.speed.models import (
    LengthFigures,
    LevelFigures,
    MetricStats,
    PrefillFit,
    Sample,
    Saturation,
    SpeedOptions,
)


def metric(values: Iterable[float | None]) -> MetricStats | None:
    """Mean, median, p95, standard deviation, min and max of the values given (None skipped)."""
    kept = [value for value in values if value is not None and math.isfinite(value)]
    if not kept:
        return None
    p95 = percentile(kept, 95)
    assert p95 is not None
    return MetricStats(
        n=len(kept),
        mean=statistics.fmean(kept),
        median=statistics.median(kept),
        p95=p95,
        stdev=statistics.stdev(kept) if len(kept) > 1 else None,
        min=min(kept),
        max=max(kept),
    )


def _median(values: Iterable[float | int | None]) -> float | None:
    kept = [value for value in values if value is not None]
    return statistics.median(kept) if kept else None


def measured(samples: Sequence[Sample], phase: str, label: str) -> list[Sample]:
    return [s for s in samples if s.phase == phase and s.label == label]


def length_figures(samples: Sequence[Sample], options: SpeedOptions) -> list[LengthFigures]:
    figures = []
    for label, words in options.lengths.items():
        calls = measured(samples, "length", label)
        ok = [s for s in calls if s.error is None]
        figures.append(
            LengthFigures(
                label=label,
                prompt_words=words,
                calls=len(calls),
                errors=len(calls) - len(ok),
                tokens_in=_median(s.tokens_in for s in ok),
                tokens_out=_median(s.tokens_out for s in ok),
                ttft_sec=metric(s.ttft_sec for s in ok),
                reasoning_ttft_sec=metric(s.reasoning_ttft_sec for s in ok),
                content_ttft_sec=metric(s.content_ttft_sec for s in ok),
                decode_tps=metric(s.decode_tps for s in ok),
                prefill_tps=metric(s.prefill_tps for s in ok),
                total_sec=metric(s.total_sec for s in ok),
            )
        )
    return figures


def prefill_fit(lengths: Sequence[LengthFigures]) -> PrefillFit | None:
    """Least squares of median TTFT on median prompt tokens, over the lengths; None with fewer
    than two lengths, or when TTFT does not grow with the prompt (prefill too fast to see)."""
    points = [
        (f.tokens_in, f.ttft_sec.median)
        for f in lengths
        if f.tokens_in is not None and f.ttft_sec is not None
    ]
    if len({x for x, _ in points}) < 2:
        return None
    mean_x = statistics.fmean(x for x, _ in points)
    mean_y = statistics.fmean(y for _, y in points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    slope = sum((x - mean_x) * (y - mean_y) for x, y in points) / spread
    if slope <= 0:
        return None
    return PrefillFit(
        prefill_tps=1 / slope, fixed_latency_sec=mean_y - slope * mean_x, points=len(points)
    )


def level_figures(samples: Sequence[Sample], options: SpeedOptions) -> list[LevelFigures]:
    figures = []
    for level in options.concurrency:
        calls = measured(samples, "concurrency", f"c{level}")
        ok = [s for s in calls if s.error is None and s.total_sec is not None]
        if calls:
            ends = [s.started_sec + (s.total_sec or 0.0) for s in calls]
            wall = max(ends) - min(s.started_sec for s in calls)
        else:
            wall = 0.0
        tokens = sum(s.tokens_out or 0 for s in ok)
        counted = all(s.tokens_out is not None for s in ok) and bool(ok)
        figures.append(
            LevelFigures(
                concurrency=level,
                calls=len(calls),
                errors=len(calls) - len(ok),
                wall_sec=wall,
                tokens_out=tokens,
                aggregate_tps=tokens / wall if counted and wall > 0 else None,
                ttft_sec=metric(s.ttft_sec for s in ok),
                decode_tps=metric(s.decode_tps for s in ok),
            )
        )
    return figures


SATURATION_GAIN = 1.10  # a level whose next gains less than 10% of throughput: saturation


def saturation(levels: Sequence[LevelFigures]) -> Saturation | None:
    """The lowest level past which the aggregate throughput rose by less than 10% (the server's
    batch is full, or something queues the requests); None without two levels measured."""
    measured = [level for level in levels if level.aggregate_tps]
    if len(measured) < 2:
        return None
    for here, above in itertools.pairwise(measured):
        assert here.aggregate_tps is not None and above.aggregate_tps is not None
        if above.aggregate_tps < here.aggregate_tps * SATURATION_GAIN:
            return Saturation(
                concurrency=here.concurrency,
                aggregate_tps=here.aggregate_tps,
                next_concurrency=above.concurrency,
                next_aggregate_tps=above.aggregate_tps,
            )
    top = measured[-1]
    return Saturation(
        concurrency=None,
        aggregate_tps=top.aggregate_tps,
        next_concurrency=None,
        next_aggregate_tps=None,
    )


def saturation_line(found: Saturation | None, highest: int | None) -> str | None:
    if found is None:
        return None
    if found.concurrency is None:
        return (
            f"saturation: not reached; throughput still rising at concurrency {highest} "
            f"({found.aggregate_tps or 0:,.0f} tokens/s)"
        )
    return (
        f"saturation at concurrency {found.concurrency}: {found.aggregate_tps or 0:,.0f} "
        f"tokens/s, and {found.next_aggregate_tps or 0:,.0f} at {found.next_concurrency} "
        "(less than 10% more)"
    )
