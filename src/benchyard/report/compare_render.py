"""Comparisons and histories as Markdown and as Rich tables; agent-named text is escaped or
printed as plain text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchyard.report.model import CandidateComparison, Comparison, RunFigures
from benchyard.report.render import interval, md_cell, money, percent

if TYPE_CHECKING:
    from rich.console import RenderableType

FLIP_MARKS = {"pass_to_fail": "pass → fail", "fail_to_pass": "fail → pass", None: ""}


def _commit(run: RunFigures) -> str:
    return "—" if run.commit is None else run.commit[:10] + ("+dirty" if run.dirty else "")


def _signed(value: float | None, fmt: str = "{:+.2f}") -> str:
    return "—" if value is None else fmt.format(value)


def _points(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:+.1f} pts"


def _delta_interval(bounds: tuple[float, float] | None) -> str:
    return "—" if bounds is None else f"{bounds[0] * 100:+.1f} to {bounds[1] * 100:+.1f} pts"


def verdict_line(candidate: CandidateComparison, alpha: float) -> str:
    """One sentence: is the change signal or noise?"""
    run, p = candidate.run.id[:8], candidate.mcnemar_p
    if candidate.significant_regression:
        return f"run {run}: significant regression (McNemar p = {p:.4g} < {alpha:g})"
    if candidate.significant_improvement:
        return f"run {run}: significant improvement (McNemar p = {p:.4g} < {alpha:g})"
    return f"run {run}: no significant change (McNemar p = {p:.4g}, alpha {alpha:g})"


def summary_rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    header = ["run", "agent", "commit", "accuracy", "95% CI", "Δ accuracy (paired)", "95% CI of Δ"]
    header += ["pass→fail", "fail→pass", "McNemar p", "Δ cost", "Δ avg turns", "Δ p50 s"]
    base = comparison.baseline
    rows = [
        [base.id[:8] + " (baseline)", base.agent, _commit(base), percent(base.accuracy)]
        + [interval(base.accuracy_ci95)]
        + ["—"] * 8
    ]
    for candidate in comparison.candidates:
        run = candidate.run
        rows.append(
            [
                run.id[:8],
                run.agent,
                _commit(run),
                percent(run.accuracy),
                interval(run.accuracy_ci95),
                _points(candidate.accuracy_delta),
                _delta_interval(candidate.accuracy_delta_ci95),
                str(candidate.pass_to_fail),
                str(candidate.fail_to_pass),
                f"{candidate.mcnemar_p:.4g}",
                _signed(candidate.cost_delta_usd, "{:+.4f}"),
                _signed(candidate.avg_turns_delta),
                _signed(candidate.p50_sec_delta),
            ]
        )
    return header, rows


def category_rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    header = ["category", "baseline"]
    for candidate in comparison.candidates:
        header += [candidate.run.id[:8], "Δ"]
    names = sorted({name for c in comparison.candidates for name in c.categories})
    rows = []
    for name in names:
        first = comparison.candidates[0].categories[name]
        row = [name, f"{first.baseline_raw or '—'} {percent(first.baseline_accuracy)}"]
        for candidate in comparison.candidates:
            delta = candidate.categories.get(name)
            row += [
                f"{delta.raw or '—'} {percent(delta.accuracy)}" if delta else "—",
                _points(delta.delta) if delta else "—",
            ]
        rows.append(row)
    return header, rows


def scenario_rows(
    comparison: Comparison, flips_only: bool = False
) -> tuple[list[str], list[list[str]]]:
    header = ["scenario", "epoch", "category", "baseline"]
    header += [c.run.id[:8] for c in comparison.candidates]
    rows = [
        [row.scenario_id, str(row.epoch), row.category]
        + [verdict or "—" for verdict in row.verdicts[:1]]
        + [
            f"{verdict or '—'} {FLIP_MARKS[flip]}".strip()
            for verdict, flip in zip(row.verdicts[1:], row.flips, strict=True)
        ]
        for row in comparison.scenarios
        if not flips_only or any(row.flips)
    ]
    return header, rows


def comparison_markdown(comparison: Comparison, flips_only: bool = False) -> str:
    base = comparison.baseline
    lines = [
        f"# benchyard compare: {md_cell(base.benchmark.name)} {md_cell(base.benchmark.version)}",
        "",
        *(f"- {verdict_line(c, comparison.alpha)}" for c in comparison.candidates),
        "",
        *_md_table(*summary_rows(comparison)),
        "",
        "## Categories",
        "",
        *_md_table(*category_rows(comparison)),
        "",
        "## Scenarios (flips first)",
        "",
        *_md_table(*scenario_rows(comparison, flips_only)),
    ]
    return "\n".join(lines) + "\n"


def history_markdown(points: list[RunFigures]) -> str:
    lines = [f"# benchyard history: {md_cell(points[0].benchmark.name)}", ""] if points else []
    return "\n".join([*lines, *_md_table(*history_rows(points))]) + "\n"


def history_rows(points: list[RunFigures]) -> tuple[list[str], list[list[str]]]:
    header = ["run", "started", "version", "agent", "commit", "status", "accuracy", "95% CI"]
    header += ["passed/counted", "cost"]
    rows = [
        [
            point.id[:8],
            f"{point.started_at:%Y-%m-%d %H:%M}",
            point.benchmark.version,
            point.agent,
            _commit(point),
            point.status,
            percent(point.accuracy),
            interval(point.accuracy_ci95),
            f"{point.passed}/{point.counted}",
            money(point.cost_usd),
        ]
        for point in points
    ]
    return header, rows


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in rows]


def rich_table(title: str, header: list[str], rows: list[list[str]]) -> RenderableType:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    for column in header:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def comparison_rich(comparison: Comparison, flips_only: bool = False) -> list[RenderableType]:
    from rich.text import Text

    return [
        *(Text(verdict_line(c, comparison.alpha)) for c in comparison.candidates),
        rich_table("runs", *summary_rows(comparison)),
        rich_table("categories", *category_rows(comparison)),
        rich_table("scenarios (flips first)", *scenario_rows(comparison, flips_only)),
    ]
