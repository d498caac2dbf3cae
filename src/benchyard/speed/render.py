"""Speed reports and comparisons as Rich renderables and Markdown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchyard.report.render import md_cell
from benchyard.speed.figures import saturation_line
from benchyard.speed.models import (
    LengthFigures,
    LevelFigures,
    MetricStats,
    SpeedComparison,
    SpeedReport,
    SpeedRunInfo,
)

if TYPE_CHECKING:
    from rich.console import RenderableType

LENGTH_COLUMNS = (
    "length",
    "prompt tok",
    "reply tok",
    "TTFT ms: median (mean, p95, sd)",
    "reasoning / answer TTFT ms",
    "decode tok/s: median (mean, p95, sd)",
    "prefill tok/s",
    "calls",
)
LEVEL_COLUMNS = (
    "concurrency",
    "calls",
    "wall s",
    "aggregate tok/s",
    "TTFT ms: median (p95)",
    "decode tok/s per call: median",
)


def ms_text(value: float | None) -> str:
    return (
        "—"
        if value is None
        else f"{value * 1000:,.0f}"
        if value >= 0.01
        else f"{value * 1000:,.1f}"
    )


def rate_text(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def _tokens(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def stats_ms(stats: MetricStats | None) -> str:
    if stats is None:
        return "—"
    sd = "—" if stats.stdev is None else ms_text(stats.stdev)
    return f"{ms_text(stats.median)} ({ms_text(stats.mean)}, {ms_text(stats.p95)}, {sd})"


def stats_rate(stats: MetricStats | None) -> str:
    if stats is None:
        return "—"
    sd = "—" if stats.stdev is None else rate_text(stats.stdev)
    return f"{rate_text(stats.median)} ({rate_text(stats.mean)}, {rate_text(stats.p95)}, {sd})"


def _split(figures: LengthFigures) -> str:
    reasoning, content = figures.reasoning_ttft_sec, figures.content_ttft_sec
    if reasoning is None:
        return f"— / {ms_text(content.median if content else None)}"
    return f"{ms_text(reasoning.median)} / {ms_text(content.median if content else None)}"


def _calls(calls: int, errors: int) -> str:
    return f"{calls}" + (f" ({errors} failed)" if errors else "")


def length_row(figures: LengthFigures) -> list[str]:
    return [
        f"{figures.label} ({figures.prompt_words} words)",
        _tokens(figures.tokens_in),
        _tokens(figures.tokens_out),
        stats_ms(figures.ttft_sec),
        _split(figures),
        stats_rate(figures.decode_tps),
        rate_text(figures.prefill_tps.median if figures.prefill_tps else None),
        _calls(figures.calls, figures.errors),
    ]


def level_row(figures: LevelFigures) -> list[str]:
    ttft = figures.ttft_sec
    return [
        str(figures.concurrency),
        _calls(figures.calls, figures.errors),
        f"{figures.wall_sec:,.2f}",
        rate_text(figures.aggregate_tps),
        "—" if ttft is None else f"{ms_text(ttft.median)} ({ms_text(ttft.p95)})",
        rate_text(figures.decode_tps.median if figures.decode_tps else None),
    ]


def heading(run: SpeedRunInfo) -> str:
    commit = "—" if run.commit is None else run.commit[:10] + ("+dirty" if run.dirty else "")
    return (
        f"speed of {run.agent} ({run.model} at {run.base_url}): run {run.id[:8]} ({run.status}), "
        f"{run.started_at:%Y-%m-%d %H:%M}, commit {commit}, protocol {run.protocol}"
    )


def _environment_lines(report: SpeedReport) -> list[str]:
    env = report.environment
    rtt = "not measured" if env.rtt_sec is None else f"{ms_text(env.rtt_sec)} ms"
    size = (
        "unknown"
        if env.model_size_bytes is None
        else f"{env.model_size_bytes / 1e9:,.2f} GB ({env.model_size_source})"
    )
    bandwidth = (
        "unknown"
        if env.bandwidth_bytes_per_sec is None
        else f"{env.bandwidth_bytes_per_sec / 1e9:,.0f} GB/s ({env.bandwidth_source})"
    )
    usage = ", ".join(f"{count} {source}" for source, count in sorted(report.usage_sources.items()))
    options = report.run.options
    lines = [
        f"round trip {rtt}; weights {size}; memory bandwidth {bandwidth}",
        f"{report.samples} measured calls after {options.warmup} warm-up(s), {options.repeats} "
        f"per length, max_tokens {options.max_tokens}"
        + (
            "; one prompt repeated per length (--same-prompt)"
            if options.same_prompt
            else "; a new prompt each call"
        )
        + f"; token counts: {usage or 'none'}",
    ]
    fit = report.prefill_fit
    if fit is not None:
        lines.append(
            f"prefill {rate_text(fit.prefill_tps)} tokens/s (slope of TTFT over {fit.points} prompt "
            f"lengths); fixed latency {ms_text(fit.fixed_latency_sec)} ms"
        )
    else:
        lines.append(
            "prefill: TTFT did not grow with the prompt (too fast to see at these lengths)"
        )
    return lines


def speed_rich(report: SpeedReport) -> list[RenderableType]:
    from rich.table import Table
    from rich.text import Text

    parts: list[RenderableType] = [Text(heading(report.run), style="bold")]
    parts += [Text(line) for line in _environment_lines(report)]
    lengths = Table(title="by prompt length, one call at a time")
    for column in LENGTH_COLUMNS:
        lengths.add_column(column)
    for figures in report.lengths:
        lengths.add_row(*length_row(figures))
    parts.append(lengths)
    if report.concurrency:
        levels = Table(title=f"concurrency sweep ({report.run.options.level_length} prompts)")
        for column in LEVEL_COLUMNS:
            levels.add_column(column)
        for level in report.concurrency:
            levels.add_row(*level_row(level))
        parts.append(levels)
        line = saturation_line(report.saturation, report.concurrency[-1].concurrency)
        if line:
            parts.append(Text(line))
    style = {"HIGH": "green", "MEDIUM": "yellow", "LOW": "red"}[report.confidence.level]
    parts.append(Text(f"confidence {report.confidence.level}", style=f"bold {style}"))
    parts += [Text(f"  - {reason}") for reason in report.confidence.reasons]
    for finding in report.findings:
        parts.append(
            Text(f"{finding.severity}: {finding.figure}: {finding.message} [{finding.rule}]")
        )
    for error in report.errors:
        parts.append(Text(f"error: {error}", style="magenta"))
    return parts


def _md_table(columns: tuple[str, ...], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in rows]
    return lines


def speed_markdown(reports: list[SpeedReport]) -> str:
    lines: list[str] = []
    for report in reports:
        lines += [f"## {md_cell(heading(report.run))}", ""]
        lines += [f"- {md_cell(line)}" for line in _environment_lines(report)]
        lines += ["", "### By prompt length, one call at a time", ""]
        lines += _md_table(LENGTH_COLUMNS, [length_row(f) for f in report.lengths])
        if report.concurrency:
            lines += ["", "### Concurrency sweep", ""]
            lines += _md_table(LEVEL_COLUMNS, [level_row(f) for f in report.concurrency])
            line = saturation_line(report.saturation, report.concurrency[-1].concurrency)
            if line:
                lines += ["", md_cell(line)]
        lines += ["", f"**Confidence {report.confidence.level}**", ""]
        lines += [f"- {md_cell(reason)}" for reason in report.confidence.reasons]
        if report.findings:
            lines += ["", "### Findings", ""]
            lines += [
                f"- **{f.severity}** ({f.rule}) {md_cell(f.figure)}: {md_cell(f.message)}"
                for f in report.findings
            ]
        if report.errors:
            lines += ["", "### Errors", ""]
            lines += [f"- {md_cell(error)}" for error in report.errors]
        lines.append("")
    return "\n".join(lines)


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}x"


def _interval(bounds: tuple[float, float] | None) -> str:
    return "—" if bounds is None else f"{bounds[0]:.2f}-{bounds[1]:.2f}x"


COMPARE_COLUMNS = ("figure", "baseline", "candidate", "ratio", "95% interval", "verdict")


def compare_rows(comparison: SpeedComparison) -> list[tuple[str, list[list[str]]]]:
    tables = []
    for candidate in comparison.candidates:
        rows = []
        for delta in candidate.deltas:
            values = delta.values
            is_time = "ms" in delta.figure
            shown = ms_text if is_time else rate_text
            rows.append(
                [
                    delta.figure,
                    shown(values.baseline),
                    shown(values.candidate),
                    _ratio(values.ratio),
                    _interval(values.ratio_ci95),
                    _speed_verdict(delta.better, values.ratio_ci95),
                ]
            )
        title = (
            f"{candidate.run.agent} run {candidate.run.id[:8]} (confidence "
            f"{candidate.confidence.level}) against {comparison.baseline.agent} run "
            f"{comparison.baseline.id[:8]} (confidence {comparison.baseline_confidence.level})"
        )
        tables.append((title, rows))
    return tables


def _speed_verdict(better: str, bounds: tuple[float, float] | None) -> str:
    if bounds is None:
        return "—"
    low, high = bounds
    if low > 1:
        return "faster" if better == "higher" else "slower"
    if high < 1:
        return "slower" if better == "higher" else "faster"
    return "no clear change"


def comparison_rich(comparison: SpeedComparison) -> list[RenderableType]:
    from rich.table import Table

    parts: list[RenderableType] = []
    for title, rows in compare_rows(comparison):
        table = Table(title=title)
        for column in COMPARE_COLUMNS:
            table.add_column(column)
        for row in rows:
            table.add_row(*row)
        parts.append(table)
    return parts


def comparison_markdown(comparison: SpeedComparison) -> str:
    lines = ["# Speed comparison", ""]
    for title, rows in compare_rows(comparison):
        lines += [f"## {md_cell(title)}", ""]
        lines += _md_table(COMPARE_COLUMNS, rows)
        lines.append("")
    return "\n".join(lines)
