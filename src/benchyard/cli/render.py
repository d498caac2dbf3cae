"""Printing runs, attempts and reports to the terminal. Agent output is printed as plain text.
The report's models and renderers are imported by the functions that print them: `runs` needs
neither."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from benchyard.runner.failures import CLAIMED_KINDS

if TYPE_CHECKING:
    from benchyard.report.model import RunReport
    from benchyard.runner.trajectory import Event
    from benchyard.store.records import AttemptRecord, RunRecord
    from benchyard.store.run_list import RunListing
    from benchyard.store.store import Store

PIPED_WIDTH = 160
PATCH_SHOWN_CHARS = 20_000
SHOWN_ATTEMPTS = 200  # tries `show` prints in its table; `--format json` has them all
VERDICT_STYLES = {"passed": "green", "failed": "red", "timeout": "yellow", "error": "magenta"}


def _console(path: Path | None = None) -> Console:
    if path is not None:
        return Console(file=path.open("w", encoding="utf-8"), width=120, no_color=True)
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, PIPED_WIDTH)  # piped output: keep ids and commits whole
    return console


def print_report(report: RunReport, path: Path | None = None) -> None:
    from benchyard.report.render import to_rich

    print_renderables(to_rich(report), path)


def print_renderables(renderables: list[RenderableType], path: Path | None = None) -> None:
    console = _console(path)
    for renderable in renderables:
        console.print(renderable)


def _commit(run: RunRecord) -> str:
    if run.agent_commit is None:
        return "—"
    return run.agent_commit[:10] + ("+dirty" if run.agent_dirty else "")


def print_runs(listing: RunListing) -> None:
    from benchyard.report.lineage import lineage
    from benchyard.store.run_list import run_status_text

    table = Table()
    for column in (
        "run",
        "started",
        "benchmark",
        "agent",
        "commit",
        "status",
        "attempts",
        "passed",
        "errors",
        "lineage",
        "nodes",
    ):
        table.add_column(column)
    calls = listing.speed_calls
    for run in listing.runs:
        verdicts = listing.verdicts.get(run.id, {})
        finished, passed = sum(verdicts.values()), verdicts.get("passed", 0)
        errors = verdicts.get("error", 0)
        table.add_row(
            run.id[:8],
            run.started_at.strftime("%Y-%m-%d %H:%M:%S"),
            Text(f"{run.benchmark_name} {run.benchmark_version}"),
            Text(run.agent_name),
            _commit(run),
            run_status_text(run.status, listing.queued.get(run.id)),
            f"{calls[run.id]}/{run.planned_attempts} calls"
            if run.id in calls
            else f"{finished}/{run.planned_attempts}",
            str(passed),
            Text(str(errors), style="bold red" if errors else ""),
            Text("; ".join(lineage(run))),
            Text(nodes_text(listing.nodes.get(run.id, {}))),
        )
    rows = table if listing.runs else "no runs yet: try `benchyard run starter --agent oracle`"
    _console().print(rows)


def nodes_text(counts: dict[str, int]) -> str:
    """Where a run's attempts ran: the node's name when one, else how many nodes."""
    if len(counts) == 1:
        return next(iter(counts))
    return f"{len(counts)} nodes" if counts else ""


def _moment(moment: datetime | None) -> str:
    return "not yet" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S")


def readable_lines(values: Mapping[str, Any], indent: str = "  ") -> list[str]:
    """Settings or an agent's configuration as `key: value` lines, nested mappings indented,
    lists joined, None as 'none' and booleans as yes/no: no Python reprs."""
    lines = []
    for key, value in values.items():
        if isinstance(value, Mapping):
            lines.append(f"{indent}{key}:" + ("" if value else " none"))
            lines += readable_lines(value, indent + "  ")
        else:
            lines.append(f"{indent}{key}: {_readable(value)}")
    return lines


def _readable(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(_readable(item) for item in value) if value else "none"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {_readable(v)}" for k, v in value.items()) or "none"
    return str(value)


def _diff_note(run: RunRecord) -> str:
    return f" (uncommitted diff {run.agent_diff_hash[:19]})" if run.agent_diff_hash else ""


def print_run(store: Store, run: RunRecord) -> None:
    from benchyard.report.render import shorten
    from benchyard.store.run_list import queue_counts, run_status_text

    console = _console()
    status = run_status_text(run.status, queue_counts(store.reader, [run.id]).get(run.id))
    lines = [
        f"run {run.id} ({status})",
        f"benchmark {run.benchmark_name} {run.benchmark_version} {run.benchmark_hash}",
        f"  at {run.benchmark_path}",
        f"agent {run.agent_name}",
        *readable_lines(run.agent_config),
        f"commit {_commit(run)}{_diff_note(run)} in {run.agent_repo or '(not a git repository)'}",
        "settings",
        *readable_lines(run.settings),
        f"benchyard {run.benchyard_version} on {run.host}; started {_moment(run.started_at)}, "
        f"finished {_moment(run.finished_at)}",
    ]
    if run.parent_run_id:
        lines.append(f"re-runs {run.parent_run_id}")
    console.print(Text("\n".join(lines)))
    _print_run_history(console, store, run)
    table = Table()
    columns = ("scenario", "epoch", "try", "verdict", "kind", "score", "turns", "sec", "node")
    for column in (*columns, "cause"):
        table.add_column(column, overflow="fold")
    shown = store.attempts(run.id, include_superseded=True, limit=SHOWN_ATTEMPTS + 1)
    for attempt in shown[:SHOWN_ATTEMPTS]:
        table.add_row(
            Text(attempt.scenario_id),
            str(attempt.epoch),
            f"{attempt.try_number}" + (" (retried)" if attempt.superseded else ""),
            Text(attempt.verdict, style=VERDICT_STYLES.get(attempt.verdict, "")),
            attempt.failure_kind or "",
            f"{attempt.score:.2f}",
            str(attempt.turns),
            f"{attempt.duration_sec:.2f}",
            Text(attempt.node or ""),
            Text(shorten(attempt.cause or "", 100)),
        )
    console.print(table)
    if len(shown) > SHOWN_ATTEMPTS:
        total = store.count_attempts(run.id, include_superseded=True)
        console.print(
            Text(
                f"the first {SHOWN_ATTEMPTS} of {total} tries, by scenario; all of them: "
                f"`benchyard show {run.id[:8]} --format json`; one scenario's: "
                f"`benchyard show {run.id[:8]} SCENARIO`; the figures: `benchyard report "
                f"{run.id[:8]}`"
            )
        )


def _print_run_history(console: Console, store: Store, run: RunRecord) -> None:
    """Why the run ended as it did, what it re-graded, and every time it was resumed."""
    from benchyard.report.render import plural
    from benchyard.store.queue import Queue

    if run.status_reason:
        console.print(Text(f"{run.status}: {run.status_reason}"))
    if run.rescored_from:
        console.print(Text(f"rescores run {run.rescored_from} (its recorded outputs, re-graded)"))
    resumes = Queue(store).resumes(run.id)
    for number, resume in enumerate(resumes, start=1):
        what = "re-queued" if resume.action == "requeued" else "cancelled, run failed:"
        console.print(
            Text(
                f"resume {number}/{len(resumes)} at {resume.at:%Y-%m-%d %H:%M:%S}: worker "
                f"{resume.lost_worker} was lost ({resume.cause}); {resume.by_worker} kept "
                f"{plural(resume.kept, 'finished attempt')}, {what} {resume.requeued}"
            )
        )


def print_scenario_attempts(store: Store, run: RunRecord, scenario_id: str) -> None:
    attempts = store.attempts(
        run.id, include_superseded=True, with_evidence=True, scenario_id=scenario_id
    )
    console = _console()
    if not attempts:
        console.print(Text(f"run {run.id[:8]} has no attempt of scenario '{scenario_id}'"))
        return
    for attempt in attempts:
        _print_attempt(console, attempt)


def _print_attempt(console: Console, attempt: AttemptRecord) -> None:
    from benchyard.report.render import money, shorten

    retried = " — superseded by a retry" if attempt.superseded else ""
    console.rule(
        Text(f"{attempt.scenario_id} epoch {attempt.epoch} try {attempt.try_number}{retried}")
    )
    console.print(
        Text(
            f"verdict {attempt.verdict}{_kind(attempt)}  score {attempt.score:.2f}  "
            f"turns {attempt.turns}  "
            f"{attempt.duration_sec:.2f}s  tokens {attempt.tokens_in}/{attempt.tokens_out}  "
            f"cost {money(attempt.cost_usd)}" + (f"  on {attempt.node}" if attempt.node else ""),
            style=VERDICT_STYLES.get(attempt.verdict, ""),
        )
    )
    if attempt.cause:
        console.print(Text(f"cause: {attempt.cause}"))
    for check in attempt.checks:
        mark = "✓" if check.passed else "✗"
        console.print(Text(f"  {mark} {check.label} (weight {check.weight:g}): {check.reason}"))
    console.print(Text("trajectory:", style="bold"))
    for event in attempt.trajectory or []:
        who = event.role or event.kind
        console.print(
            Text(f"  {event.kind:<11} {who:<9}{_call_figures(event)} {shorten(event.content, 400)}")
        )
    for name, text, dropped in (
        ("stdout", attempt.stdout, attempt.stdout_dropped_bytes),
        ("stderr", attempt.stderr, attempt.stderr_dropped_bytes),
    ):
        if text or dropped:
            console.print(Text(f"{name}:", style="bold"))
            console.print(Text(shorten(text or "", 2000)))
            if dropped:
                console.print(
                    Text(f"[{name} capped: {dropped} more bytes dropped]", style="yellow")
                )
    if attempt.patch:
        _print_patch(console, attempt.patch)


def _call_figures(event: Event) -> str:
    """A model call's tokens in/out, time to first token, latency and cost, as far as known:
    ' [812/40 tok, ttft 0.21s, 1.30s, $0.0011]'."""
    parts = []
    if event.tokens_in or event.tokens_out:
        parts.append(f"{event.tokens_in or 0}/{event.tokens_out or 0} tok")
    if event.ttft_sec is not None:
        parts.append(f"ttft {event.ttft_sec:.2f}s")
    if event.latency_sec is not None:
        parts.append(f"latency {event.latency_sec:.2f}s")
    if event.cost_usd is not None:
        parts.append(f"${event.cost_usd:.4f}")
    elif parts and event.role == "assistant":
        parts.append("cost unknown")
    return f" [{', '.join(parts)}]" if parts else ""


def _kind(attempt: AttemptRecord) -> str:
    """The failure's kind, and whether only the agent claimed it (see runner/failures.py)."""
    if attempt.failure_kind is None:
        return ""
    claimed = ", claimed by the agent" if attempt.failure_kind in CLAIMED_KINDS else ""
    return f" ({attempt.failure_kind}{claimed})"


def _print_patch(console: Console, patch: str) -> None:
    """The agent's change, as plain text (it is the agent's), cut after PATCH_SHOWN_CHARS."""
    console.print(Text("patch:", style="bold"))
    console.print(Text(patch[:PATCH_SHOWN_CHARS].rstrip("\n")))
    if len(patch) > PATCH_SHOWN_CHARS:
        console.print(
            Text(f"[patch cut: {len(patch) - PATCH_SHOWN_CHARS} more characters]", style="yellow")
        )
