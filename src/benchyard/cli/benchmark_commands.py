"""Commands about benchmarks: init, validate, benchmarks, verify."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import ListFormatOption, SandboxOption, check_list_format


@handle_errors
def init(
    directory: Annotated[Path, typer.Argument(help="Where to write benchyard.yaml.")] = Path("."),
    format: ListFormatOption = "table",
) -> None:
    """Write a starter benchyard.yaml (agents, store) and a minimal example agent."""
    from benchyard.scaffold import init_lines, init_project

    check_list_format(format)
    done = init_project(directory)
    if format == "json":
        from benchyard.report.listing import dump_json

        sys.stdout.write(dump_json(done))
        return
    for line in init_lines(done):
        typer.echo(line)


@handle_errors
def validate(
    path: Annotated[str, typer.Argument(help="A benchmark directory or built-in name.")],
    format: ListFormatOption = "table",
) -> None:
    """Check a benchmark's files and list every problem with file, line and field."""
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.report.render import plural

    check_list_format(format)
    if format == "json":
        from benchyard.report.listing import dump_json
        from benchyard.report.outputs import validation_output

        checked = validation_output(path)
        sys.stdout.write(dump_json(checked))
        if not checked.valid:
            typer.echo(f"{plural(len(checked.problems), 'problem')} found", err=True)
            raise typer.Exit(1)
        return
    benchmark = load_benchmark(path)
    categories = sorted({s.category for s in benchmark.scenarios})
    typer.echo(
        f"ok: {benchmark.name} {benchmark.version}: {plural(len(benchmark.scenarios), 'scenario')} "
        f"in {plural(len(categories), 'category', 'categories')} ({', '.join(categories)}); "
        f"{benchmark.content_hash}"
    )


@handle_errors
def benchmarks(format: ListFormatOption = "table") -> None:
    """List the built-in benchmark library and the benchmarks under the current directory."""
    from benchyard.report.listing import benchmark_entries, dump_json
    from benchyard.report.render import plural

    check_list_format(format)
    listed = benchmark_entries(Path.cwd())
    if format == "json":
        sys.stdout.write(dump_json(listed))
        return
    for entry in listed:
        if entry.valid:
            scenarios = plural(entry.scenarios or 0, "scenario")
            detail = f"{entry.version}  {scenarios}  {entry.description}"
        else:
            detail = (
                f"invalid ({plural(entry.problems or 0, 'problem')}; "
                f"run `benchyard validate {entry.label}`)"
            )
        typer.echo(f"{entry.label:<28} {entry.origin:<9} {detail}")
    _list_formats()


def _list_formats() -> None:
    """The import formats, after the benchmarks (docs/importers.md)."""
    from benchyard.importers.registry import format_names, get_importer

    typer.echo(
        "formats (`benchyard import FORMAT SOURCE`, or format: and source: in benchmark.yaml):"
    )
    for name in format_names():
        importer = get_importer(name)
        typer.echo(f"{name:<28} {'format':<9} {importer.format_version}  {importer.summary}")


@handle_errors
def verify(
    benchmark: Annotated[str, typer.Argument(help="A benchmark directory or built-in name.")],
    sandbox: SandboxOption = None,
    format: ListFormatOption = "table",
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency", "-j", min=1, help="Scenarios verified at once (default: CPUs)."
        ),
    ] = None,
) -> None:
    """Run every scenario's reference through its checks; report broken cases (exit 1 if any).
    Coding scenarios' references are graded in the sandbox, as an agent's change would be."""
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.report.render import plural
    from benchyard.runner.api import verify_benchmark, verify_benchmark_at

    check_list_format(format)
    if format == "json":
        from benchyard.report.listing import dump_json

        verified = verify_benchmark_at(benchmark, sandbox, concurrency)
        sys.stdout.write(dump_json(verified))
        if verified.problems:
            typer.echo(f"{plural(len(verified.problems), 'problem')} found", err=True)
        if verified.broken or verified.problems:
            raise typer.Exit(1)
        return
    loaded = load_benchmark(benchmark)
    outcomes = verify_benchmark(loaded, sandbox, concurrency)
    broken = [outcome for outcome in outcomes if not outcome.ok]
    for outcome in broken:
        typer.echo(f"broken: {outcome.scenario_id}: {outcome.reason}")
    from benchyard.runner.verify_counts import counts_line

    line = counts_line(outcomes)
    if line:
        typer.echo(line)
    typer.echo(
        f"{loaded.name} {loaded.version}: {plural(len(outcomes), 'scenario')} verified, "
        f"{len(broken)} broken"
    )
    if broken:
        raise typer.Exit(1)
