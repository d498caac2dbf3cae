"""The `benchyard` command line. Commands parse options, call the library and render; heavy modules
are imported inside the commands so that `benchyard --help` stays fast.

Commands are `module:function` entries, imported when used: `benchyard run ...` builds the command
line of `run` alone (its module imported, its options parsed); the top-level help lists every
command by name and help without building their options; anything else (a misspelt command) and
`app` (for tests) build every command. The top-level help itself, at a terminal of 80 columns
or more, is printed from its text (cli/help_text.py) without importing Typer."""

from __future__ import annotations

import functools
import os
import sys

TYPE_CHECKING = False  # typing is not imported for the help (it costs a fifth of the help's time)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

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
    "view-bundle": "bundle_commands:view_bundle",
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
    "agents": "agent_commands:agents_app",
    "proposals": "automation_commands:proposals_app",
    "schedule": "automation_commands:schedule_app",
    "webhooks": "automation_commands:webhooks_app",
}
# Commands that run attempts: garbage collection is held while they start (benchyard/startup.py).
RUNNING_COMMANDS = ("run", "rerun")


def _load(target: str) -> Any:
    import importlib

    module, attribute = target.split(":")
    return getattr(importlib.import_module(f"benchyard.cli.{module}"), attribute)


def _bare_app() -> typer.Typer:
    import typer

    from benchyard.cli.top_options import main_options

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
    import typer

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


def _help_from_text(args: list[str]) -> bool:
    """Whether `args` ask for the top-level help and the terminal is wide enough for its text to
    be what Typer prints."""
    if args not in ([], ["--help"]):
        return False  # any other command never needs the help's text
    from benchyard.cli.help_text import HELP_WIDTH

    return _terminal_columns() >= HELP_WIDTH


def _terminal_columns() -> int:
    """The terminal's width as Click reads it (shutil.get_terminal_size, which imports `re`):
    COLUMNS, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _print_help(asked: bool) -> None:
    """The top-level help from its text, as Typer prints it: asked for (`--help`), on stdout;
    for want of a command, on stderr with exit status 2."""
    from benchyard.cli.help_text import HELP_TEXT, USAGE

    text = HELP_TEXT.replace(USAGE, f"Usage: {_program_name()} ", 1)
    if asked:
        sys.stdout.write(text)
        return
    sys.stderr.write(text)
    sys.exit(2)


def _program_name() -> str:
    """The command's name as Click's help says it: `benchyard` (the script's file name), or
    `python -m benchyard` when started as a module (click.utils._detect_program_name)."""
    package = getattr(sys.modules["__main__"], "__package__", None)
    if not package:
        return os.path.basename(sys.argv[0])
    name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    module = package if name == "__main__" else f"{package}.{name}"
    return f"python -m {module.lstrip('.')}"


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] in RUNNING_COMMANDS:
        from benchyard.startup import hold_collection

        hold_collection()
    if _help_from_text(args):
        _print_help(bool(args))
    else:
        _asked(args)()
