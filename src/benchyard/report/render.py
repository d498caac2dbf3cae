"""Rendering reports as Markdown and as Rich tables. Agent output is untrusted: Markdown cells
are escaped, Rich text is never parsed for markup."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchyard.report.model import RunReport

if TYPE_CHECKING:
    from rich.console import RenderableType

CAUSE_CHARS = 240


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def interval(bounds: tuple[float, float] | None) -> str:
    return "—" if bounds is None else f"{bounds[0] * 100:.1f}-{bounds[1] * 100:.1f}%"


def commit_label(report: RunReport) -> str:
    agent = report.run.agent
    if agent.commit is None:
        return "—"
    return agent.commit[:10] + ("+dirty" if agent.dirty else "")


def money(value: float | None) -> str:
    return "—" if value is None else f"${value:.4f}"


def shorten(text: str, limit: int = CAUSE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def md_cell(text: str) -> str:
    """Escape text for a Markdown table cell or list item, so agent output cannot inject markup."""
    escaped = text.replace("\\", "\\\\")
    for char in "|`*_[]<>#!":
        escaped = escaped.replace(char, "\\" + char)
    return escaped


def to_markdown(reports: list[RunReport]) -> str:
    """One summary row per run with per-category raw counts, then each run's failures with causes."""
    categories = sorted({name for report in reports for name in report.categories})
    header = [
        "run",
        "agent",
        "commit",
        "accuracy",
        "95% CI",
        "avg turns",
        "FPR",
        *categories,
        "errors",
        "timeouts",
        "tasks",
        "cost",
    ]
    lines = [
        f"# benchyard report: {md_cell(reports[0].run.benchmark.name)} {md_cell(reports[0].run.benchmark.version)}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for report in reports:
        summary = report.summary
        cells = [
            report.run.id[:8],
            md_cell(report.run.agent.name),
            commit_label(report),
            percent(summary.accuracy),
            interval(summary.accuracy_ci95),
            "—" if summary.avg_turns is None else f"{summary.avg_turns:.2f}",
            percent(summary.false_positive_rate),
            *[report.categories[c].raw if c in report.categories else "—" for c in categories],
            str(summary.errors),
            str(summary.timeouts),
            str(summary.task_count),
            money(summary.cost_usd),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    for report in reports:
        lines += ["", f"## Failures in run {report.run.id[:8]} ({len(report.failures)})", ""]
        if not report.failures:
            lines.append("None.")
        for failure in report.failures:
            epoch = f" (epoch {failure.epoch})" if report.run.settings.get("epochs", 1) > 1 else ""
            lines.append(
                f"- **{md_cell(failure.scenario_id)}**{epoch} [{failure.category}] {failure.verdict}: "
                f"{md_cell(shorten(failure.cause))}"
            )
        lines += _md_review(report)
    return "\n".join(lines) + "\n"


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


def to_rich(report: RunReport) -> list[RenderableType]:
    from rich.table import Table
    from rich.text import Text

    summary = report.summary
    run = report.run
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    rows = [
        ("run", f"{run.id}  ({run.status})"),
        ("benchmark", f"{run.benchmark.name} {run.benchmark.version}  {run.benchmark.hash[:19]}"),
        ("agent", f"{run.agent.name}  commit {commit_label(report)}"),
        (
            "accuracy",
            f"{percent(summary.accuracy)}  (95% CI {interval(summary.accuracy_ci95)}; "
            f"{summary.passed}/{summary.counted} counted)",
        ),
        (
            "verdicts",
            f"{summary.passed} passed, {summary.failed} failed, {summary.timeouts} timeouts, "
            f"{summary.errors} errors (not counted), {summary.retried_tries} retried tries",
        ),
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
        head.add_row(label, Text(value))
    categories = Table(title="categories", title_justify="left")
    for column in ("category", "passed/counted", "accuracy", "timeouts", "errors"):
        categories.add_column(column)
    for name, counts in report.categories.items():
        categories.add_row(
            Text(name),
            counts.raw,
            percent(counts.accuracy),
            str(counts.timeouts),
            str(counts.errors),
        )
    renderables: list[RenderableType] = [head, categories]
    if report.failures:
        failures = Table(title=f"failures ({len(report.failures)})", title_justify="left")
        for column in ("scenario", "verdict", "cause"):
            failures.add_column(column, overflow="fold")
        for failure in report.failures:
            failures.add_row(
                Text(failure.scenario_id), failure.verdict, Text(shorten(failure.cause))
            )
        renderables.append(failures)
    return renderables + _rich_review(report)


def _run_history_rows(report: RunReport) -> list[tuple[str, str]]:
    """Why the run ended as it did, what it re-graded, how often it was resumed."""
    run = report.run
    rows = [("reason", run.status_reason)] if run.status_reason else []
    if run.rescored_from:
        rows.append(("rescores", f"run {run.rescored_from} (its recorded outputs, graded again)"))
    if run.resumes:
        rows.append(("resumed", f"{len(run.resumes)} time(s) after a lost worker (see `show`)"))
    return rows


def _rich_review(report: RunReport) -> list[RenderableType]:
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
    if report.flags:
        flags = Table(title=f"flags for review ({len(report.flags)})", title_justify="left")
        for column in ("flag", "scenario", "detail"):
            flags.add_column(column, overflow="fold")
        for flag in report.flags:
            flags.add_row(flag.kind, Text(flag.scenario_id + _epoch(flag.epoch)), Text(flag.detail))
        renderables.append(flags)
    return renderables


def _sec(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}s"
