"""Commands that read runs: runs, show, report."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import DbOption, ListFormatOption, RunArg, check_list_format

if TYPE_CHECKING:
    from benchyard.report.aggregated import StreamedReport
    from benchyard.store.lite import Reader
    from benchyard.store.records import RunRecord
    from benchyard.store.store import Store


@handle_errors
def runs(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many runs.")] = 20,
    benchmark: Annotated[
        str | None, typer.Option("--benchmark", help="Only runs of this benchmark.")
    ] = None,
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """The run history, newest first, with each run's commit."""
    from benchyard.cli.context import reading
    from benchyard.store.run_list import QueueCounts, run_listing

    check_list_format(format)
    with reading(db) as reader:
        listing = run_listing(reader, limit, benchmark)
    if format == "json":
        from benchyard.report.listing import dump_json, run_entry

        entries = [
            run_entry(
                run,
                listing.verdicts.get(run.id, {}),
                listing.nodes.get(run.id),
                listing.queued.get(run.id, QueueCounts(run.id)).stuck,
            )
            for run in listing.runs
        ]
        sys.stdout.write(dump_json(entries))
        return
    from benchyard.cli.render import print_runs

    print_runs(listing)


@handle_errors
def show(
    run_ref: RunArg,
    scenario: Annotated[
        str | None, typer.Argument(help="A scenario id: show its attempts in full.")
    ] = None,
    format: ListFormatOption = "table",
    db: DbOption = None,
) -> None:
    """A run's settings and attempts, or one scenario's attempts with checks and trajectory."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.cli.render import print_run, print_scenario_attempts

    check_list_format(format)
    store = open_store(db, load_project())
    found = store.resolve_run(run_ref)
    if found.kind == "speed":  # a speed run: its measured calls, no attempts
        from benchyard.cli.model_commands import show_speed_run

        show_speed_run(store, found, format)
        return
    if scenario is not None:
        _require_scenario(store, found, scenario)
    if format == "json":
        sys.stdout.write(_shown_json(store, found, scenario))
        return
    if scenario is None:
        print_run(store, found)
    else:
        print_scenario_attempts(store, found, scenario)


SHOWN_SCENARIO_IDS = 10


def _require_scenario(store: Store, run: RunRecord, scenario: str) -> None:
    """Refuse (exit 2) a scenario the run has no attempt of, naming some it has."""
    from benchyard.errors import BenchyardError

    if store.attempts(run.id, include_superseded=True, scenario_id=scenario):
        return
    ids = sorted({attempt.scenario_id for attempt in store.attempts(run.id)})
    shown = ", ".join(ids[:SHOWN_SCENARIO_IDS]) + (", ..." if len(ids) > SHOWN_SCENARIO_IDS else "")
    raise BenchyardError(
        f"run {run.id[:8]} has no scenario '{scenario}' (its scenarios: {shown or 'none'})"
    )


def _shown_json(store: Store, run: RunRecord, scenario: str | None) -> str:
    from benchyard.report.build import run_info
    from benchyard.report.listing import RunShown, attempt_view, dump_json
    from benchyard.store.run_list import QueueCounts, queue_counts

    attempts = store.attempts(
        run.id, include_superseded=True, with_evidence=scenario is not None, scenario_id=scenario
    )
    shown = RunShown(
        run=run_info(store, run),
        planned_attempts=run.planned_attempts,
        scenario_id=scenario,
        attempts=[attempt_view(attempt, scenario is not None) for attempt in attempts],
        stuck=queue_counts(store.reader, [run.id]).get(run.id, QueueCounts(run.id)).stuck,
    )
    return dump_json(shown)


@handle_errors
def report(
    run_refs: Annotated[
        list[str], typer.Argument(help="One or more runs (id, prefix, latest, latest~N).")
    ],
    format: Annotated[
        str, typer.Option("--format", help="table, json, md, audit or junit (CI test reports).")
    ] = "table",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file.")
    ] = None,
    merged: Annotated[
        bool, typer.Option("--merged", help="Merge each run with the runs it re-ran.")
    ] = False,
    db: DbOption = None,
) -> None:
    """A run's report: accuracy with its interval, per-category counts, failures with causes."""
    from benchyard.cli.context import load_project, open_store
    from benchyard.report.build import build_report, streamed_report
    from benchyard.report.render import to_markdown

    if format not in ("table", "json", "md", "audit", "junit"):
        raise typer.BadParameter(
            f"'{format}' is not one of table, json, md, audit, junit", param_hint="--format"
        )
    if format in ("table", "json") and not merged:
        from benchyard.cli.context import reading

        with reading(db) as reader:  # a SQLite store's through sqlite3, without SQLAlchemy
            if _counted_reports(reader, run_refs, format, output):
                return
    store = open_store(db, load_project())
    resolved = [store.resolve_run(ref) for ref in run_refs]
    if format == "audit":  # one audit artefact per model (docs/sre.md#the-audit-artefact)
        from benchyard.cli.audit_commands import write_audits

        write_audits(store, resolved, output, merged)
        return
    if any(run.kind == "speed" for run in resolved):  # speed runs, or speed next to ability
        from benchyard.cli.model_commands import render_speed_runs

        render_speed_runs(store, resolved, format, output)
        return
    if format in ("table", "json"):
        streamed = (streamed_report(store, run, merged=merged) for run in resolved)
        _write_streamed(streamed, format, output)
        return
    if format == "junit":  # one testcase per scenario and epoch (docs/ci.md)
        from benchyard.report.junit import junit_runs, to_junit

        text = to_junit(junit_runs(store, resolved, merged))
    if format == "md":  # fit for $GITHUB_STEP_SUMMARY (docs/ci.md)
        from benchyard.report.step_summary import fit_step_summary

        reports = [build_report(store, run, merged=merged) for run in resolved]
        text = fit_step_summary(to_markdown(reports), [run.id[:8] for run in resolved])
    _emit(output, lambda out: out.write(text))


def _counted_reports(reader: Reader, run_refs: list[str], format: str, output: Path | None) -> bool:
    """The table or JSON report of runs that the database counts (report/build.py's
    counted_report), read through `reader`; False, with nothing written, where a run is a speed
    run or one whose final attempts must be folded (the Store's path reports those)."""
    from benchyard.report.build import counted_report
    from benchyard.store.run_reads import resolve_run

    resolved = [resolve_run(reader, ref) for ref in run_refs]
    if any(run.kind == "speed" for run in resolved):
        return False
    reports = [counted_report(reader, run) for run in resolved]
    counted = [report for report in reports if report is not None]
    if len(counted) < len(reports):
        return False
    _write_streamed(counted, format, output)
    return True


def _write_streamed(reports: Iterable[StreamedReport], format: str, output: Path | None) -> None:
    """Each report's table (its first failures and flags: none held) or the JSON of them all
    (each failure and flag written as it is read)."""
    if format == "table":
        from benchyard.cli.render import print_renderables
        from benchyard.report.render import Shown, to_rich

        for streamed in reports:
            print_renderables(to_rich(streamed.head, Shown.streamed(streamed)), output)
        return
    from benchyard.report.listing import write_streamed_json

    payload = [streamed.document() for streamed in reports]
    _emit(
        output,
        lambda out: write_streamed_json(payload[0] if len(payload) == 1 else payload, out),
    )


def _emit(output: Path | None, write: Callable[[TextIO], object]) -> None:
    """What `write` writes, on stdout or into `output` (then said on stderr)."""
    if output is None:
        write(sys.stdout)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w", encoding="utf-8") as file:
        write(file)
    typer.echo(f"wrote {output}", err=True)
