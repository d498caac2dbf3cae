"""Accuracy over time as an SVG chart: the geometry is computed here, the SVG written by a
template (so every label is escaped). Each series is one agent; a point is a run (or a commit's
runs pooled) with its 95% interval as a bar; hollow points are subsets of the benchmark and are
never joined to full runs; a line never crosses a change of the benchmark's content hash, and
each change is marked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchyard.web.models import Chart, ChartMark, ChartPoint, ChartSeries, ChartTick

PALETTE = ("#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#db2777", "#0891b2", "#4b5563")
WIDTH, HEIGHT = 760, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 40
MAX_X_LABELS = 12


@dataclass(frozen=True)
class Plotted:
    """One point to draw: its slot on the x axis, accuracy and interval, and what it is."""

    slot: int
    series: str
    accuracy: float
    low: float
    high: float
    content_hash: str
    subset: bool
    title: str
    href: str | None


def accuracy_chart(
    title: str,
    slots: Sequence[str],
    points: Sequence[Plotted],
    series_order: Sequence[str],
    changes: Sequence[tuple[int, str]],
) -> Chart:
    """`slots` label the x positions in time order; `changes` are (slot, label) where the
    benchmark's content hash differs from the slot before."""
    count = max(1, len(slots))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x_of(slot: float) -> float:
        return round(LEFT + (slot + 0.5) * plot_w / count, 2)

    def y_of(value: float) -> float:
        return round(TOP + (1 - value) * plot_h, 2)

    series = []
    for index, name in enumerate(series_order):
        mine = sorted((p for p in points if p.series == name), key=lambda p: p.slot)
        if not mine:
            continue
        series.append(
            ChartSeries(
                name=name,
                color=PALETTE[index % len(PALETTE)],
                paths=[
                    " ".join(
                        f"{'M' if i == 0 else 'L'}{x_of(p.slot)},{y_of(p.accuracy)}"
                        for i, p in enumerate(stretch)
                    )
                    for stretch in _stretches(mine)
                    if len(stretch) > 1
                ],
                points=[
                    ChartPoint(
                        x=x_of(p.slot),
                        y=y_of(p.accuracy),
                        low=y_of(p.low),
                        high=y_of(p.high),
                        hollow=p.subset,
                        title=p.title,
                        href=p.href,
                    )
                    for p in mine
                ],
            )
        )
    step = max(1, -(-len(slots) // MAX_X_LABELS))
    return Chart(
        title=title,
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        right=WIDTH - RIGHT,
        top=TOP,
        bottom=HEIGHT - BOTTOM,
        y_ticks=[ChartTick(at=y_of(v / 4), label=f"{25 * v}%") for v in range(5)],
        x_ticks=[
            ChartTick(at=x_of(slot), label=label)
            for slot, label in enumerate(slots)
            if slot % step == 0
        ],
        series=series,
        marks=[ChartMark(x=x_of(slot - 0.5), label=label) for slot, label in changes],
    )


def _stretches(points: list[Plotted]) -> list[list[Plotted]]:
    """Runs of consecutive full-benchmark points of one content hash: the only points joined."""
    stretches: list[list[Plotted]] = []
    current: list[Plotted] = []
    for point in points:
        if point.subset:
            continue
        if current and current[-1].content_hash != point.content_hash:
            stretches.append(current)
            current = []
        current.append(point)
    if current:
        stretches.append(current)
    return stretches
