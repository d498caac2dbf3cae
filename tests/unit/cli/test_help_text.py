"""`benchyard --help` is printed from text: that text is what Typer prints for the whole command
line, and a real `benchyard` prints it (or Typer's own help where the terminal is narrower)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command

from benchyard.cli.app import full_app
from benchyard.cli.help_text import HELP_TEXT, HELP_WIDTH
from benchyard.cli.help_writer import rendered_help

SCRIPT = Path(sys.executable).with_name("benchyard")


def _whole_help(width: int) -> str:
    command = get_command(full_app())
    context = command.context_class(command, info_name="benchyard", terminal_width=width)
    return command.get_help(context) + "\n"


def _benchyard(argv: list[str], columns: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False)


def test_the_text_is_typers_help_of_the_whole_command_line() -> None:
    """Fails when a command's help changed: `python -m benchyard.cli.help_writer` writes it again."""
    assert HELP_TEXT == rendered_help() == _whole_help(HELP_WIDTH - 2)
    assert "grade-patches" in HELP_TEXT and HELP_TEXT.startswith("Usage: benchyard [OPTIONS]")


@pytest.mark.parametrize("columns", [HELP_WIDTH, 200])
def test_help_prints_the_text_at_a_wide_terminal(columns: int) -> None:
    shown = _benchyard([str(SCRIPT), "--help"], columns)
    assert (shown.returncode, shown.stdout, shown.stderr) == (0, HELP_TEXT, "")


def test_no_command_prints_it_on_stderr_with_status_2() -> None:
    shown = _benchyard([str(SCRIPT)], 120)
    assert (shown.returncode, shown.stdout, shown.stderr) == (2, "", HELP_TEXT)


def test_as_a_module_it_names_itself_as_typer_does() -> None:
    shown = _benchyard([sys.executable, "-m", "benchyard", "--help"], 120)
    assert shown.stdout == HELP_TEXT.replace("Usage: benchyard", "Usage: python -m benchyard")


def test_a_narrow_terminal_gets_typers_own_help() -> None:
    shown = _benchyard([str(SCRIPT), "--help"], 60)
    assert shown.returncode == 0 and "Commands:" in shown.stdout and "grade-patches" in shown.stdout
    assert shown.stdout != HELP_TEXT
    assert max(len(line) for line in shown.stdout.splitlines()) <= 60
