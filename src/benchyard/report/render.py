"""Rendering reports as Markdown and as Rich tables. Agent output is untrusted: Markdown cells
are escaped, Rich text is never parsed for markup."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the helpers (plural, shorten, ...) load neither the models nor importers
    from rich.console import RenderableType

    from benchyard.report.aggregated import StreamedReport
    from benchyard.report.model import CategoryCounts, Failure, ReviewFlag, RunReport

CAUSE_CHARS = 240
SHOWN_ROWS = 100  # failures and flags a terminal table lists; Markdown and JSON list every one


def plural(count: int, word: str, many: str | None = None) -> str:
    """'1 attempt', '2 attempts' ('1 try', '2 tries' with `many`)."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def interval(bounds: tuple[float, float] | None) -> str:
    return "—" if bounds is None else f"{bounds[0] * 100:.1f}-{bounds[1] * 100:.1f}%"


def commit_label(report: RunReport) -> str:
    agent = report.run.agent
    if agent.commit is None:
        return "—"
    return agent.commit[:10] + ("+dirty" if agent.dirty else "")


def _diff_label(report: RunReport) -> str:
    diff = report.run.agent.diff_hash
    return f" (uncommitted diff {diff[:19]})" if diff else ""


def money(value: float | None) -> str:
    """A cost; None (no price known and none claimed) is "unknown", never $0.0000."""
    return "unknown" if value is None else f"${value:.4f}"


def shorten(text: str, limit: int = CAUSE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def md_cell(text: str) -> str:
    """Escape text for a Markdown table cell or list item, so agent output cannot inject markup."""
    escaped = text.replace("\\", "\\\\")
    for char in "|`*_[]<>#!":
        escaped = escaped.replace(char, "\\" + char)
    return escaped


def errors_text(errors: int, attempts: int) -> str:
    """Errors out of final attempts, e.g. '2 of 12 (16.7%)'; '0' without any."""
    if not errors:
        return "0"
    return f"{errors} of {attempts} ({percent(errors / attempts)})"


def category_cell(counts: CategoryCounts) -> str:
    """Raw counts of a category with its errors beside them, e.g. '3/4 + 2 errors'."""
    if not counts.errors:
        return counts.raw
    return f"{counts.raw} + {counts.errors} error{'s' if counts.errors != 1 else ''}"


def errors_warning(report: RunReport) -> str | None:
    """The sentence no reader of a run with errors should miss; None without errors."""
    summary = report.summary
    if not summary.errors:
        return None
    return (
        f"{errors_text(summary.errors, summary.attempt_count)} final attempts are errors, left "
        f"out of accuracy; counted as failures, accuracy would be "
        f"{percent(summary.accuracy_if_errors_failed)} (`benchyard rerun {report.run.id[:8]} "
        "--failed` runs them again)"
    )


def profiles_text(reports: list[RunReport]) -> str:
    """The profile the runs used (`--profile`), said once, or each when they differ."""
    profiles = list(dict.fromkeys(r.run.settings.get("profile") or "full" for r in reports))
    if len(profiles) == 1:
        return f" (profile {profiles[0]})"
    return f" (profiles differ: {', '.join(profiles)})"


def failure_label(verdict: str, failure_kind: str | None) -> str:
    return verdict if failure_kind is None else f"{verdict} ({failure_kind})"


def to_markdown(reports: list[RunReport]) -> str:
    """One summary row per run with per-category raw counts (and errors beside accuracy), then each
    run's categories and failures with causes."""
    from benchyard.importers.metrics import metric_lines

    categories = sorted({name for report in reports for name in report.categories})
    header = [
        "run",
        "agent",
        "commit",
        "accuracy",
        "errors",
        "95% CI",
        "avg turns",
        "FPR",
        *categories,
        "timeouts",
        "tasks",
        "cost",
    ]
    lines = [
        f"# benchyard report: {md_cell(reports[0].run.benchmark.name)} {md_cell(reports[0].run.benchmark.version)}"
        + profiles_text(reports),
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for report in reports:
        summary = report.summary
        cells = [
            report.run.id[:8] + (" (merged)" if len(report.run.merged_runs) > 1 else ""),
            md_cell(report.run.agent.name),
            commit_label(report),
            percent(summary.accuracy),
            errors_text(summary.errors, summary.attempt_count),
            interval(summary.accuracy_ci95),
            "—" if summary.avg_turns is None else f"{summary.avg_turns:.2f}",
            percent(summary.false_positive_rate),
            *[
                category_cell(report.categories[c]) if c in report.categories else "—"
                for c in categories
            ],
            str(summary.timeouts),
            str(summary.task_count),
            money(summary.cost_usd),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    provenance = [line for report in reports for line in _md_provenance(report)]
    lines += ["", *provenance] if provenance else []
    if any(report.summary.errors for report in reports):
        lines += [""]
        lines += [
            f"**Errors in run {report.run.id[:8]}: {warning}.**"
            for report in reports
            if (warning := errors_warning(report))
        ]
    for report in reports:
        imported = metric_lines(report.format_metrics)
        if imported:
            lines += ["", f"## Format figures in run {report.run.id[:8]}", ""]
            lines += [f"- {label}: {md_cell(text)}" for label, text in imported]
        lines += _md_categories(report)
        lines += ["", f"## Failures in run {report.run.id[:8]} ({len(report.failures)})", ""]
        if not report.failures:
            lines.append("None.")
        if report.summary.claimed_faults:
            lines += [
                f"{report.summary.claimed_faults} failed because the agent claimed a fault of "
                "its own or of its command (exit 75, 126, 127) on every try: counted against it.",
                "",
            ]
        for failure in report.failures:
            epoch = f" (epoch {failure.epoch})" if report.run.settings.get("epochs", 1) > 1 else ""
            lines.append(
                f"- **{md_cell(failure.scenario_id)}**{epoch} [{md_cell(failure.category)}] "
                f"{failure_label(failure.verdict, failure.failure_kind)}: "
                f"{md_cell(shorten(failure.cause))}"
            )
        lines += _md_review(report)
    return "\n".join(lines) + "\n"


def _md_provenance(report: RunReport) -> list[str]:
    """What a run was made from and what it was merged with, as a list item; none for a run
    read alone that was made from nothing else."""
    from benchyard.report.lineage import merged_note

    parts = [*report.run.lineage]
    merged = merged_note(report.run.merged_runs)
    parts += [merged] if merged else []
    return [f"- run {report.run.id[:8]}: {md_cell('; '.join(parts))}"] if parts else []


def _md_categories(report: RunReport) -> list[str]:
    """Each category's counts, its errors beside its accuracy and interval; then each check
    type's pass rate and interval."""
    lines = ["", f"## Categories in run {report.run.id[:8]}", ""]
    lines += [
        "| category | passed/counted | accuracy | 95% CI | errors | timeouts |",
        "|---|---|---|---|---|---|",
    ]
    for name, counts in report.categories.items():
        cells = [
            md_cell(name),
            counts.raw,
            percent(counts.accuracy),
            interval(counts.accuracy_ci95),
        ]
        cells += [errors_text(counts.errors, counts.attempts), str(counts.timeouts)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"## Checks in run {report.run.id[:8]}", ""]
    if not report.checks:
        return [*lines, "None graded."]
    lines += ["| check | passed/total | pass rate | 95% CI |", "|---|---|---|---|"]
    for name, check in report.checks.items():
        cells = [md_cell(name), f"{check.passed}/{check.total}", percent(check.pass_rate)]
        lines.append("| " + " | ".join([*cells, interval(check.pass_rate_ci95)]) + " |")
    return lines


def _md_review(report: RunReport) -> list[str]:
    """pass@k with epochs > 1, and the flags for human review."""
    lines = []
    if report.repeated is not None:
        lines += ["", f"## Repeated attempts in run {report.run.id[:8]}", ""]
        lines += ["| k | pass@k | pass^k | scenarios |", "|---|---|---|---|"]
        for row in report.repeated.by_k:
            lines.append(
                f"| {row.k} | {percent(row.pass_at_k)} | {percent(row.pass_hat_k)} | {row.scenarios} |"
            )
    lines += ["", f"## Flags for review in run {report.run.id[:8]} ({len(report.flags)})", ""]
    lines += [
        f"- {flag.kind}: **{md_cell(flag.scenario_id)}**{_epoch(flag.epoch)}: {md_cell(flag.detail)}"
        for flag in report.flags
    ] or ["None."]
    return lines


def _epoch(epoch: int | None) -> str:
    return "" if epoch is None else f" (epoch {epoch})"


@dataclass(frozen=True)
class Shown:
    """What a terminal table lists of a report's failures and flags (the first SHOWN_ROWS of
    each), and how many there are."""

    failures: list[Failure]
    failure_count: int
    flags: list[ReviewFlag]
    flag_count: int

    @classmethod
    def of(cls, report: RunReport) -> Shown:
        failures, flags = report.failures, report.flags
        return cls(failures[:SHOWN_ROWS], len(failures), flags[:SHOWN_ROWS], len(flags))

    @classmethod
    def streamed(cls, report: StreamedReport) -> Shown:
        """The first failures read alone; the flags read through, counted."""
        from benchyard.report.model import Failure

        failures = [Failure(**failure) for failure in report.failures(SHOWN_ROWS)]
        flags = iter(report.flags())
        first = list(islice(flags, SHOWN_ROWS))
        return cls(failures, report.failure_count, first, len(first) + sum(1 for _ in flags))


def to_rich(report: RunReport, shown: Shown | None = None) -> list[RenderableType]:
    """The report as terminal tables; its failures and flags as `shown` has them (by default,
    from the report)."""
    from rich.table import Table
    from rich.text import Text

    shown = shown or Shown.of(report)
    summary = report.summary
    run = report.run
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    rows = [
        ("run", f"{run.id}  ({run.status})"),
        (
            "benchmark",
            f"{run.benchmark.name} {run.benchmark.version}  {run.benchmark.hash[:19]}"
            + profiles_text([report]),
        ),
        ("agent", f"{run.agent.name}  commit {commit_label(report)}" + _diff_label(report)),
        (
            "accuracy",
            f"{percent(summary.accuracy)}  (95% CI {interval(summary.accuracy_ci95)}; "
            f"{summary.passed}/{summary.counted} counted"
            + (f", {plural(summary.errors, 'error')} left out)" if summary.errors else ")"),
        ),
        ("errors", errors_warning(report) or "none"),
        (
            "verdicts",
            f"{summary.passed} passed, {summary.failed} failed"
            + (
                f" ({summary.claimed_faults} claimed a fault: exit 75, 126, 127)"
                if summary.claimed_faults
                else ""
            )
            + f", {plural(summary.timeouts, 'timeout')}, "
            f"{plural(summary.errors, 'error')} (not counted), "
            f"{plural(summary.retried_tries, 'retried try', 'retried tries')}",
        ),
        *_metric_lines(report.format_metrics),
        ("turns", "—" if summary.avg_turns is None else f"{summary.avg_turns:.2f} on average"),
        (
            "false positives",
            f"{percent(summary.false_positive_rate)} of {summary.negative_count} negative",
        ),
        (
            "tokens / cost",
            f"{summary.tokens_in} in, {summary.tokens_out} out, {money(summary.cost_usd)}"
            + (
                f"; judge {summary.judge_tokens_in} in, {summary.judge_tokens_out} out, "
                f"{money(summary.judge_cost_usd)}"
                if summary.judge_tokens_in or summary.judge_cost_usd
                else ""
            ),
        ),
        (
            "duration",
            f"p50 {_sec(summary.durations.p50_sec)}, p90 {_sec(summary.durations.p90_sec)}, "
            f"max {_sec(summary.durations.max_sec)}",
        ),
    ]
    if summary.reasoning_truncated:
        rows.append(
            (
                "lost to reasoning",
                f"{summary.reasoning_truncated} empty answers (`benchyard rerun RUN --recover`)",
            )
        )
    for label, value in rows + _run_history_rows(report):
        style = "bold red" if label == "errors" and summary.errors else ""
        head.add_row(label, Text(value, style=style))
    categories = Table(title="categories", title_justify="left")
    for column in ("category", "passed/counted", "accuracy", "95% CI", "errors", "timeouts"):
        categories.add_column(column)
    for name, counts in report.categories.items():
        categories.add_row(
            Text(name),
            counts.raw,
            percent(counts.accuracy),
            interval(counts.accuracy_ci95),
            Text(
                errors_text(counts.errors, counts.attempts),
                style="bold red" if counts.errors else "",
            ),
            str(counts.timeouts),
        )
    renderables: list[RenderableType] = [head, categories]
    if report.checks:
        checks = Table(title="checks", title_justify="left")
        for column in ("check", "passed/total", "pass rate", "95% CI"):
            checks.add_column(column)
        for name, check in report.checks.items():
            checks.add_row(
                Text(name),
                f"{check.passed}/{check.total}",
                percent(check.pass_rate),
                interval(check.pass_rate_ci95),
            )
        renderables.append(checks)
    if shown.failure_count:
        failures = Table(title=f"failures ({shown.failure_count})", title_justify="left")
        for column in ("scenario", "epoch", "verdict", "cause"):
            failures.add_column(column, overflow="fold")
        for failure in shown.failures:
            failures.add_row(
                Text(failure.scenario_id),
                str(failure.epoch),
                failure_label(failure.verdict, failure.failure_kind),
                Text(shorten(failure.cause)),
            )
        renderables.append(failures)
        renderables += _rest_elsewhere(shown.failure_count, "failures", "with its cause")
    return renderables + _rich_review(report, shown)


def _metric_lines(metrics: dict[str, Any] | None) -> list[tuple[str, str]]:
    """importers/metrics.py's metric_lines, imported only for a report that has a format's."""
    if not metrics:
        return []
    from benchyard.importers.metrics import metric_lines

    return metric_lines(metrics)


def _rest_elsewhere(count: int, what: str, with_what: str) -> list[RenderableType]:
    """Under a terminal table cut at SHOWN_ROWS: the line that says where the rest are."""
    from rich.text import Text

    if count <= SHOWN_ROWS:
        return []
    return [
        Text(
            f"the first {SHOWN_ROWS} of {count} {what}; every one, {with_what}: "
            "--format md or --format json"
        )
    ]


def _run_history_rows(report: RunReport) -> list[tuple[str, str]]:
    """Why the run ended as it did, what it re-graded, how often it was resumed."""
    from benchyard.report.lineage import merged_note

    run = report.run
    rows = [("reason", run.status_reason)] if run.status_reason else []
    if run.rescored_from:
        rows.append(("rescores", f"run {run.rescored_from} (its recorded outputs, graded again)"))
    rows += [("lineage", "; ".join(run.lineage))] if run.lineage else []
    merged = merged_note(run.merged_runs)
    rows += [("merged", merged.removeprefix("merged: "))] if merged else []
    if run.resumes:
        rows.append(
            ("resumed", f"{plural(len(run.resumes), 'time')} after a lost worker (see `show`)")
        )
    return rows


def _rich_review(report: RunReport, shown: Shown) -> list[RenderableType]:
    from rich.table import Table
    from rich.text import Text

    renderables: list[RenderableType] = []
    if report.repeated is not None:
        repeated = Table(
            title=f"repeated attempts ({report.repeated.epochs} epochs)", title_justify="left"
        )
        for column in ("k", "pass@k", "pass^k", "scenarios"):
            repeated.add_column(column)
        for row in report.repeated.by_k:
            repeated.add_row(
                str(row.k), percent(row.pass_at_k), percent(row.pass_hat_k), str(row.scenarios)
            )
        renderables.append(repeated)
    if shown.flag_count:
        flags = Table(title=f"flags for review ({shown.flag_count})", title_justify="left")
        for column in ("flag", "scenario", "detail"):
            flags.add_column(column, overflow="fold")
        for flag in shown.flags:
            flags.add_row(flag.kind, Text(flag.scenario_id + _epoch(flag.epoch)), Text(flag.detail))
        renderables.append(flags)
        renderables += _rest_elsewhere(shown.flag_count, "flags", "with its detail")
    return renderables


def _sec(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}s"
