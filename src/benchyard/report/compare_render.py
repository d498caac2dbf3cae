"""Comparisons and histories as Markdown and as Rich tables; agent-named text is escaped or
printed as plain text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchyard.report.model import CandidateComparison, Comparison, RunFigures
from benchyard.report.render import interval, md_cell, money, percent
from benchyard.report.stats import significantly_more

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult

FLIP_MARKS = {"pass_to_fail": "pass → fail", "fail_to_pass": "fail → pass", None: ""}
ERROR_MARKS = {(False, True): "(new)", (True, False): "(was error)"}
CONTROLS = dict.fromkeys([*range(0x20), *range(0x7F, 0xA0)], "?")  # escapes, bells, CR: shown as ?


def _commit(run: RunFigures) -> str:
    return "—" if run.commit is None else run.commit[:10] + ("+dirty" if run.dirty else "")


def _signed(value: float | None, fmt: str = "{:+.2f}") -> str:
    return "—" if value is None else fmt.format(value)


def _points(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:+.1f} pts"


def _delta_interval(bounds: tuple[float, float] | None) -> str:
    return "—" if bounds is None else f"{bounds[0] * 100:+.1f} to {bounds[1] * 100:+.1f} pts"


def _test_label(candidate: CandidateComparison) -> str:
    """How the headline names the accuracy test: 'McNemar', or the clustered test with epochs."""
    return "McNemar" if candidate.test == "exact McNemar" else "clustered paired test"


def verdict_line(candidate: CandidateComparison, alpha: float) -> str:
    """One sentence: is the change signal or noise? Errors are left out of accuracy, so a change in
    them is named, and is never called "no significant change" (docs/queue-and-compare.md)."""
    c = candidate
    run, p = c.run.id[:8], c.p_value
    test = _test_label(c)
    errors = f"{c.baseline_errors} → {c.errors} errors in {c.compared} pairs"
    errors_changed = bool(c.counted_to_error or c.error_to_counted)
    reasons = []
    if c.significant_regression:
        reasons.append(f"significant regression ({test} p = {p:.4g} < {alpha:g})")
    if c.errors_hide_regression:
        reasons.append(
            f"possible regression hidden by errors: with its {c.pass_to_error} new errors on "
            "scenarios the baseline passed counted as failures, accuracy drops significantly "
            f"(McNemar p = {c.errors_as_failures_p:.4g} < {alpha:g})"
        )
    if c.significant_error_rise:
        reasons.append(
            f"significant rise in errors, which accuracy leaves out: {errors} "
            f"(exact paired p = {c.error_p:.4g} < {alpha:g})"
        )
    if reasons:
        hint = (
            f"; re-run the errors (`benchyard rerun {run} --failed`) and compare again (a rerun "
            "is merged with the run it re-ran)"
            if c.errors_hide_regression or c.significant_error_rise
            else ""
        )
        return f"run {run}: " + "; ".join(reasons) + hint
    error_note = f"; {errors} (exact paired p = {c.error_p:.4g})" if errors_changed else ""
    if c.significant_improvement:
        worst = c.pass_to_fail + c.pass_to_error  # pass -> fail with the new errors as failures
        if c.pass_to_error and not significantly_more(c.fail_to_pass, worst, alpha):
            return (
                f"run {run}: accuracy rose on the pairs counted in both ({test} p = {p:.4g} < "
                f"{alpha:g}), but not significantly with its {c.pass_to_error} new errors counted "
                f"as failures (p = {c.errors_as_failures_p:.4g}){error_note}"
            )
        return f"run {run}: significant improvement ({test} p = {p:.4g} < {alpha:g}){error_note}"
    if errors_changed:
        return (
            f"run {run}: errors changed, {errors} (exact paired p = {c.error_p:.4g}); accuracy "
            f"on the {c.paired} pairs counted in both is within noise ({test} p = {p:.4g}, "
            f"alpha {alpha:g})"
        )
    return f"run {run}: no significant change ({test} p = {p:.4g}, alpha {alpha:g})"


def provenance_lines(comparison: Comparison) -> list[str]:
    """One line per compared run made from another (a rerun, a rescore, an import) or merged with
    the runs it re-ran: no side of a comparison is one silently."""
    from benchyard.report.lineage import merged_note

    lines = []
    for figures in [comparison.baseline, *(c.run for c in comparison.candidates)]:
        parts = [*figures.lineage]
        merged = merged_note(figures.merged_runs)
        parts += [merged] if merged else []
        if parts:
            lines.append(f"run {figures.id[:8]}: " + "; ".join(parts))
    return lines


def statistics_lines(comparison: Comparison) -> list[str]:
    """Per run: which test ran and why, how its interval was computed, the smallest difference it
    could have detected, and the scenarios that changed between the runs (not paired)."""
    lines = []
    for c in comparison.candidates:
        run = c.run.id[:8]
        interval = (
            "Newcombe's interval"
            if c.accuracy_delta_ci95_method == "newcombe"
            else f"cluster-robust interval over {c.scenarios_paired} scenarios (naive Newcombe "
            f"{_delta_interval(c.naive_accuracy_delta_ci95)})"
        )
        detectable = (
            "no pair varied, so nothing sizes the smallest detectable difference"
            if c.minimum_detectable_effect is None
            else f"smallest difference detectable with power 0.8 at alpha 0.05: "
            f"±{c.minimum_detectable_effect * 100:.1f} pts"
        )
        lines.append(f"run {run}: test: {c.test} ({c.test_reason}); {interval}; {detectable}")
        lines += _versions_lines(c, comparison.baseline)
    return lines


def _versions_lines(c: CandidateComparison, baseline: RunFigures) -> list[str]:
    run = c.run.id[:8]
    before, after = baseline.benchmark, c.run.benchmark
    lines = []
    other = (before.version, before.hash) != (after.version, after.hash)
    if other and not c.changed_scenarios and c.scenario_versions == "per scenario":
        lines.append(
            f"run {run}: benchmark {before.version} ({before.hash[:15]}) → {after.version} "
            f"({after.hash[:15]}), but no scenario the runs share changed: all paired"
        )
    if c.scenario_versions == "whole benchmark":
        lines.append(
            f"run {run}: attempts recorded before per-scenario hashes: the whole-benchmark "
            "version decides, and every scenario is paired (--allow-version-mismatch)"
        )
    if c.changed_scenarios:
        count = len(c.changed_scenarios)
        what = "paired anyway (--allow-version-mismatch)" if c.changed_paired else "not paired"
        lines.append(
            f"run {run}: {count} scenario{'s' if count != 1 else ''} changed since the baseline "
            f"(own content hash), {what}: {', '.join(c.changed_scenarios)}"
        )
    return lines


def _errors(run: RunFigures) -> str:
    return f"{run.errors}/{run.attempt_count}"


def summary_rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    header = ["run", "agent", "commit", "accuracy", "errors", "95% CI", "Δ accuracy (paired)"]
    header += ["95% CI of Δ", "pass→fail", "fail→pass", "p (test)", "min. detectable Δ"]
    header += ["Δ error rate (p)", "Δ cost", "Δ avg turns", "Δ p50 s"]
    base = comparison.baseline
    rows = [
        [base.id[:8] + " (baseline)", base.agent, _commit(base), percent(base.accuracy)]
        + [_errors(base), _run_interval(base)]
        + ["—"] * 10
    ]
    for candidate in comparison.candidates:
        run = candidate.run
        rows.append(
            [
                run.id[:8],
                run.agent,
                _commit(run),
                percent(run.accuracy),
                _errors(run),
                _run_interval(run),
                _points(candidate.accuracy_delta),
                _delta_interval(candidate.accuracy_delta_ci95),
                str(candidate.pass_to_fail),
                str(candidate.fail_to_pass),
                f"{candidate.p_value:.4g} ({_test_label(candidate)})",
                _detectable(candidate.minimum_detectable_effect),
                f"{_points(candidate.error_rate_delta)} (p {candidate.error_p:.4g})",
                _signed(candidate.cost_delta_usd, "{:+.4f}"),
                _signed(candidate.avg_turns_delta),
                _signed(candidate.p50_sec_delta),
            ]
        )
    return header, rows


def _run_interval(run: RunFigures) -> str:
    """A run's accuracy interval, '(clustered)' when its epochs made it cluster-robust."""
    clustered = run.accuracy_ci95_method != "wilson" and run.accuracy_ci95 is not None
    return interval(run.accuracy_ci95) + (" (clustered)" if clustered else "")


def _detectable(effect: float | None) -> str:
    return "—" if effect is None else f"±{effect * 100:.1f} pts"


def category_rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    header = ["category", "baseline"]
    for candidate in comparison.candidates:
        header += [candidate.run.id[:8], "Δ"]
    names = sorted({name for c in comparison.candidates for name in c.categories})
    rows = []
    for name in names:
        first = comparison.candidates[0].categories[name]
        row = [
            name,
            _category(first.baseline_raw, first.baseline_accuracy, first.baseline_errors),
        ]
        for candidate in comparison.candidates:
            delta = candidate.categories.get(name)
            row += [
                _category(delta.raw, delta.accuracy, delta.errors) if delta else "—",
                _points(delta.delta) if delta else "—",
            ]
        rows.append(row)
    return header, rows


def _category(raw: str | None, accuracy: float | None, errors: int | None) -> str:
    """'31/33 93.9%', with the category's errors beside it: '31/33 93.9% + 2 errors'."""
    text = f"{raw or '—'} {percent(accuracy)}"
    return text + (f" + {errors} error{'s' if errors != 1 else ''}" if errors else "")


def scenario_rows(
    comparison: Comparison, flips_only: bool = False
) -> tuple[list[str], list[list[str]]]:
    header = ["scenario", "epoch", "category", "baseline"]
    header += [c.run.id[:8] for c in comparison.candidates]
    rows = []
    for row in comparison.scenarios:
        edited = row.changed or [False] * len(row.flips)
        marks = [
            FLIP_MARKS[flip]
            or ("(scenario changed)" if was_edited else "")
            or _error_mark(row.verdicts[0], verdict)
            for verdict, flip, was_edited in zip(row.verdicts[1:], row.flips, edited, strict=True)
        ]
        if flips_only and not any(marks):
            continue
        rows.append(
            [row.scenario_id, str(row.epoch), row.category, row.verdicts[0] or "—"]
            + [
                f"{verdict or '—'} {mark}".strip()
                for verdict, mark in zip(row.verdicts[1:], marks, strict=True)
            ]
        )
    return header, rows


def unchanged_note(comparison: Comparison) -> str | None:
    """The line that stands for the unchanged rows left out of the scenarios, if any were."""
    count = comparison.unchanged
    if comparison.unchanged_listed or not count:
        return None
    rows = "row" if count == 1 else "rows"
    return (
        f"{count:,} unchanged {rows} (the same verdict in every run) not listed; --all lists them"
    )


def _error_mark(before: str | None, after: str | None) -> str:
    """'(new)' on a new error, '(was error)' on a verdict where the baseline had an error."""
    if before is None or after is None:
        return ""
    return ERROR_MARKS.get((before == "error", after == "error"), "")


def comparison_markdown(comparison: Comparison, flips_only: bool = False) -> str:
    base = comparison.baseline
    lines = [
        f"# benchyard compare: {md_cell(base.benchmark.name)} {md_cell(base.benchmark.version)}",
        "",
        *(f"- {verdict_line(c, comparison.alpha)}" for c in comparison.candidates),
        *(f"- {md_cell(line)}" for line in provenance_lines(comparison)),
        *(f"- {md_cell(line)}" for line in statistics_lines(comparison)),
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
    note = unchanged_note(comparison)
    return "\n".join(lines + (["", note] if note else [])) + "\n"


def history_markdown(points: list[RunFigures]) -> str:
    lines = [f"# benchyard history: {md_cell(points[0].benchmark.name)}", ""] if points else []
    return "\n".join([*lines, *_md_table(*history_rows(points))]) + "\n"


def history_rows(points: list[RunFigures]) -> tuple[list[str], list[list[str]]]:
    """One row per run, oldest first. A run of part of the benchmark (a rerun, filters, a limit)
    says so in `scope`, and its accuracy is marked `(partial)`: it is not the benchmark's score.
    A new benchmark version, or the same version with other content, is marked where it starts."""
    header = ["run", "started", "version", "agent", "commit", "status", "scope", "accuracy"]
    header += ["95% CI", "0% … 100%", "passed/counted", "errors", "cost"]
    rows = []
    for before, point in zip([None, *points], points, strict=False):
        accuracy = percent(point.accuracy) + (" (partial)" if point.partial else "")
        rows.append(
            [
                point.id[:8],
                f"{point.started_at:%Y-%m-%d %H:%M}",
                _version(before, point),
                point.agent,
                _commit(point),
                point.status,
                point.scope,
                accuracy,
                _run_interval(point),
                interval_bar(point.accuracy, point.accuracy_ci95),
                f"{point.passed}/{point.counted}",
                _errors(point),
                money(point.cost_usd),
            ]
        )
    return header, rows


def _version(before: RunFigures | None, point: RunFigures) -> str:
    """The benchmark version, marked where it changes from the run before (`new version`), or
    where the same version's content changed (`edited`: another content hash)."""
    version = point.benchmark.version
    if before is None:
        return version
    changed = _changed_note(point.changed_scenarios)
    if before.benchmark.version != version:
        return f"{version} (new version{changed})"
    if before.benchmark.hash != point.benchmark.hash:
        return f"{version} (edited: {point.benchmark.hash[:15]}{changed})"
    return version


def _changed_note(changed: list[str] | None, shown: int = 3) -> str:
    """'; 2 scenarios changed: s01, s07' (the first few named), '; no scenario changed', or ''
    when the runs' attempts do not say (recorded before per-scenario hashes)."""
    if changed is None:
        return ""
    if not changed:
        return "; no scenario changed"
    names = ", ".join(changed[:shown]) + (
        f", +{len(changed) - shown}" if len(changed) > shown else ""
    )
    return f"; {len(changed)} scenario{'s' if len(changed) != 1 else ''} changed: {names}"


def interval_bar(
    accuracy: float | None, bounds: tuple[float, float] | None, width: int = 20
) -> str:
    """The accuracy and its interval drawn on a 0-100% scale of `width` cells: '·' outside the
    interval, '─' inside, '●' at the accuracy ('│' at both ends)."""
    if accuracy is None or bounds is None:
        return ""

    def cell(value: float) -> int:
        return min(width - 1, max(0, int(value * width)))

    low, high, at = cell(bounds[0]), cell(bounds[1]), cell(accuracy)
    return "".join(
        "●" if i == at else "│" if i in (low, high) else "─" if low < i < high else "·"
        for i in range(width)
    )


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


class PlainTable:
    """A table as aligned lines of plain text, for the thousands of rows a comparison of large runs
    can list: a Rich table measures and wraps every cell, which takes seconds there."""

    def __init__(self, title: str, header: list[str], rows: list[list[str]]) -> None:
        from rich.cells import cell_len

        cells = [[cell.translate(CONTROLS) for cell in row] for row in [header, *rows]]
        widths = [max(map(cell_len, column)) for column in zip(*cells, strict=True)]
        rule = ["─" * width for width in widths]
        self.lines = [title, *(_aligned(row, widths) for row in [cells[0], rule, *cells[1:]])]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        for line in self.lines:
            yield Segment(line + "\n")


def _aligned(cells: list[str], widths: list[int]) -> str:
    from rich.cells import cell_len

    padded = (
        cell + " " * (width - cell_len(cell)) for cell, width in zip(cells, widths, strict=True)
    )
    return "  ".join(padded).rstrip()


def comparison_rich(comparison: Comparison, flips_only: bool = False) -> list[RenderableType]:
    from rich.text import Text

    note = unchanged_note(comparison)
    return [
        *(Text(verdict_line(c, comparison.alpha)) for c in comparison.candidates),
        *(Text(line) for line in provenance_lines(comparison)),
        *(Text(line) for line in statistics_lines(comparison)),
        rich_table("runs", *summary_rows(comparison)),
        rich_table("categories", *category_rows(comparison)),
        PlainTable("scenarios (flips first)", *scenario_rows(comparison, flips_only)),
        *([Text(note)] if note else []),
    ]
