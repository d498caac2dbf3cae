"""Writing cli/help_text.py again from Typer's own top-level help:
`python -m benchyard.cli.help_writer`, after a change to a command's docstring or to the command
list (tests/unit/cli/test_help_text.py fails until then)."""

from __future__ import annotations

from pathlib import Path

from benchyard.cli import help_text
from benchyard.cli.app import help_app

START = 'HELP_TEXT = """\\\n'


def rendered_help() -> str:
    """The top-level help as Typer prints it at a terminal `HELP_WIDTH` columns wide (or wider):
    Click's help is as wide as the terminal less 2 columns, at most 78."""
    from typer.main import get_command

    command = get_command(help_app())
    width = help_text.HELP_WIDTH - 2
    context = command.context_class(command, info_name="benchyard", terminal_width=width)
    return command.get_help(context) + "\n"


def write() -> None:
    """Replace the text in cli/help_text.py with Typer's help as it is now."""
    path = Path(help_text.__file__)
    source = path.read_text(encoding="utf-8")
    start = source.index(START) + len(START)
    end = source.index('"""\n', start)
    path.write_text(source[:start] + rendered_help() + source[end:], encoding="utf-8")


if __name__ == "__main__":
    write()
