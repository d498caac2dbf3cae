"""The `benchyard` command line. Commands parse options, call the library and render; heavy modules
are imported inside the commands so that `benchyard --help` stays fast."""

from __future__ import annotations

from typing import Annotated

import typer

from benchyard.cli import (
    audit_commands,
    automation_commands,
    benchmark_commands,
    compare_commands,
    fake_llm_commands,
    import_commands,
    interop_commands,
    model_commands,
    queue_commands,
    report_commands,
    run_commands,
    web_commands,
)

app = typer.Typer(
    name="benchyard",
    help="Run benchmarks against AI agents and LLM endpoints; compare runs; re-run what failed.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from benchyard import __version__

        typer.echo(f"benchyard {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """benchyard: every scenario in parallel, every trajectory recorded, every run tagged with a commit."""


COMMANDS = (
    benchmark_commands.init,
    benchmark_commands.validate,
    benchmark_commands.benchmarks,
    benchmark_commands.verify,
    run_commands.run,
    run_commands.rerun,
    queue_commands.worker,
    queue_commands.cancel,
    report_commands.runs,
    report_commands.show,
    report_commands.report,
    compare_commands.compare,
    compare_commands.history,
    compare_commands.rescore,
    fake_llm_commands.fake_llm,
    web_commands.serve,
    audit_commands.gate,
    model_commands.speed,
    model_commands.status,
    model_commands.pairwise,
    automation_commands.mcp,
    interop_commands.export,
)
for command in COMMANDS:
    app.command()(command)
app.command(name="import")(import_commands.import_benchmark)
app.command(name="grade-patches")(import_commands.grade_patches)
app.command(name="import-run")(interop_commands.import_run)
for group in (
    automation_commands.proposals_app,
    automation_commands.schedule_app,
    automation_commands.webhooks_app,
):
    app.add_typer(group)


def main() -> None:
    app()
