"""Printing runs, attempts and reports to the terminal. Agent output is printed as plain text."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from benchyard.report.model import RunReport
from benchyard.report.render import shorten, to_rich
from benchyard.runner.failures import CLAIMED_KINDS
from benchyard.store.records import AttemptRecord, RunRecord
from benchyard.store.store import Store

PIPED_WIDTH = 160
PATCH_SHOWN_CHARS = 20_000
VERDICT_STYLES = {"passed": "green", "failed": "red", "timeout": "yellow", "error": "magenta"}


def _console(path: Path | None = None) -> Console:
    if path is not None:
        return Console(file=path.open("w", encoding="utf-8"), width=120, no_color=True)
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, PIPED_WIDTH)  # piped output: keep ids and commits whole
    return console


def print_report(report: RunReport, path: Path | None = None) -> None:
    print_renderables(to_rich(report), path)


def print_renderables(renderables: list[RenderableType], path: Path | None = None) -> None:
    console = _console(path)
    for renderable in renderables:
        console.print(renderable)


def _commit(run: RunRecord) -> str:
    if run.agent_commit is None:
        return "—"
    return run.agent_commit[:10] + ("+dirty" if run.agent_dirty else "")


def print_runs(store: Store, runs: list[RunRecord]) -> None:
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
        "parent",
    ):
        table.add_column(column)
    counts = store.verdict_counts([run.id for run in runs])
    for run in runs:
        verdicts = counts.get(run.id, {})
        finished, passed = sum(verdicts.values()), verdicts.get("passed", 0)
        errors = verdicts.get("error", 0)
        table.add_row(
            run.id[:8],
            run.started_at.strftime("%Y-%m-%d %H:%M:%S"),
            Text(f"{run.benchmark_name} {run.benchmark_version}"),
            Text(run.agent_name),
            _commit(run),
            run.status,
            f"{finished}/{run.planned_attempts}",
            str(passed),
            Text(str(errors), style="bold red" if errors else ""),
            (run.parent_run_id or "")[:8],
        )
    _console().print(table if runs else "no runs yet: try `benchyard run starter --agent oracle`")


def _moment(moment: datetime | None) -> str:
    return "not yet" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S")


def print_run(store: Store, run: RunRecord) -> None:
    console = _console()
    console.print(
        Text(
            f"run {run.id} ({run.status})\n"
            f"benchmark {run.benchmark_name} {run.benchmark_version} {run.benchmark_hash}\n"
            f"  at {run.benchmark_path}\n"
            f"agent {run.agent_name} {run.agent_config}\n"
            f"commit {_commit(run)} in {run.agent_repo or '(not a git repository)'}\n"
            f"settings {run.settings}\n"
            f"benchyard {run.benchyard_version} on {run.host}; started {_moment(run.started_at)}, "
            f"finished {_moment(run.finished_at)}"
            + (f"\nre-runs {run.parent_run_id}" if run.parent_run_id else "")
        )
    )
    _print_run_history(console, store, run)
    table = Table()
    for column in ("scenario", "epoch", "try", "verdict", "kind", "score", "turns", "sec", "cause"):
        table.add_column(column, overflow="fold")
    for attempt in store.attempts(run.id, include_superseded=True):
        table.add_row(
            Text(attempt.scenario_id),
            str(attempt.epoch),
            f"{attempt.try_number}" + (" (retried)" if attempt.superseded else ""),
            Text(attempt.verdict, style=VERDICT_STYLES.get(attempt.verdict, "")),
            attempt.failure_kind or "",
            f"{attempt.score:.2f}",
            str(attempt.turns),
            f"{attempt.duration_sec:.2f}",
            Text(shorten(attempt.cause or "", 100)),
        )
    console.print(table)


def _print_run_history(console: Console, store: Store, run: RunRecord) -> None:
    """Why the run ended as it did, what it re-graded, and every time it was resumed."""
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
                f"{resume.kept} finished attempts, {what} {resume.requeued}"
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
    retried = " — superseded by a retry" if attempt.superseded else ""
    console.rule(
        Text(f"{attempt.scenario_id} epoch {attempt.epoch} try {attempt.try_number}{retried}")
    )
    console.print(
        Text(
            f"verdict {attempt.verdict}{_kind(attempt)}  score {attempt.score:.2f}  "
            f"turns {attempt.turns}  "
            f"{attempt.duration_sec:.2f}s  tokens {attempt.tokens_in}/{attempt.tokens_out}",
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
        tokens = (
            f" [{event.tokens_in or 0}/{event.tokens_out or 0} tok]"
            if event.tokens_in or event.tokens_out
            else ""
        )
        console.print(Text(f"  {event.kind:<11} {who:<9}{tokens} {shorten(event.content, 400)}"))
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
