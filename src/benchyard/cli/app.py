"""The `benchyard` command line. Commands parse options, call the library and render; heavy modules
are imported inside the commands so that `benchyard --help` stays fast.

Commands are `module:function` entries, imported when used: `benchyard run ...` builds the command
line of `run` alone (its module imported, its options parsed); the top-level help lists every
command by name and help without building their options; anything else (a misspelt command) and
`app` (for tests) build every command."""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Iterable
from typing import Annotated, Any

import typer

# Every command by name, in the order the help lists them: "module:function" under benchyard.cli.
COMMANDS: dict[str, str] = {
    "init": "benchmark_commands:init",
    "validate": "benchmark_commands:validate",
    "benchmarks": "benchmark_commands:benchmarks",
    "verify": "benchmark_commands:verify",
    "run": "run_commands:run",
    "rerun": "run_commands:rerun",
    "worker": "queue_commands:worker",
    "cancel": "queue_commands:cancel",
    "runs": "report_commands:runs",
    "show": "report_commands:show",
    "report": "report_commands:report",
    "compare": "compare_commands:compare",
    "history": "compare_commands:history",
    "rescore": "compare_commands:rescore",
    "fake-llm": "fake_llm_commands:fake_llm",
    "serve": "web_commands:serve",
    "gate": "audit_commands:gate",
    "speed": "model_commands:speed",
    "status": "model_commands:status",
    "pairwise": "model_commands:pairwise",
    "mcp": "automation_commands:mcp",
    "export": "interop_commands:export",
    "import": "import_commands:import_benchmark",
    "grade-patches": "import_commands:grade_patches",
    "import-run": "interop_commands:import_run",
    "gc": "gc_commands:gc",
}
# Groups of subcommands by name: "module:attribute", a typer.Typer.
GROUPS: dict[str, str] = {
    "proposals": "automation_commands:proposals_app",
    "schedule": "automation_commands:schedule_app",
    "webhooks": "automation_commands:webhooks_app",
}


def _version(value: bool) -> None:
    if value:
        from benchyard import __version__

        typer.echo(f"benchyard {__version__}")
        raise typer.Exit()


def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """benchyard: every scenario in parallel, every trajectory recorded, every run tagged with a commit."""


def _load(target: str) -> Any:
    module, attribute = target.split(":")
    return getattr(importlib.import_module(f"benchyard.cli.{module}"), attribute)


def _bare_app() -> typer.Typer:
    built = typer.Typer(
        name="benchyard",
        help="Run benchmarks against AI agents and LLM endpoints; compare runs; re-run what failed.",
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
    )
    built.callback()(main_options)
    return built


def build_app(names: Iterable[str]) -> typer.Typer:
    """The command line with the commands and groups called `names`."""
    built = _bare_app()
    for name in names:
        if name in GROUPS:
            built.add_typer(_load(GROUPS[name]))
        else:
            built.command(name=name)(_load(COMMANDS[name]))
    return built


@functools.cache
def full_app() -> typer.Typer:
    return build_app([*COMMANDS, *GROUPS])


def _listed_only() -> None:
    pass  # a command of the top-level help, which lists it and never runs it


def help_app() -> typer.Typer:
    """Every command and group by name and help, without their options: the top-level help."""
    built = _bare_app()
    for name, target in COMMANDS.items():
        built.command(name=name, help=_load(target).__doc__)(_listed_only)
    for name, target in GROUPS.items():
        built.add_typer(typer.Typer(name=name, help=_load(target).info.help))
    return built


def __getattr__(name: str) -> typer.Typer:
    """`app`: the whole command line, built on first use."""
    if name == "app":
        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _asked(args: list[str]) -> typer.Typer:
    """The command line for `args`: the command they start with alone, the listing for the
    top-level help, else every command."""
    first = args[0] if args else "--help"
    if first in COMMANDS or first in GROUPS:
        return build_app([first])
    if first == "--help":
        return help_app()
    return full_app()


def main() -> None:
    _asked(sys.argv[1:])()
