"""The command line builds only the command it is asked for; the top-level help lists every command
without building their options; the whole command line for anything else and for tests."""

from __future__ import annotations

import pytest
import typer
from typer.core import TyperGroup
from typer.main import get_command
from typer.testing import CliRunner

from benchyard.cli.app import COMMANDS, GROUPS, _asked, app, full_app, help_app


def _group(built: typer.Typer) -> TyperGroup:
    command = get_command(built)
    assert isinstance(command, TyperGroup)
    return command


def test_app_is_every_command_in_order() -> None:
    assert app is full_app()
    assert list(_group(app).commands) == [*COMMANDS, *GROUPS]


@pytest.mark.parametrize("name", [*COMMANDS, *GROUPS])
def test_a_command_alone_has_the_options_it_has_among_all(name: str) -> None:
    alone = _group(_asked([name, "--help"])).commands
    assert list(alone) == [name]
    options = [param.opts for param in alone[name].params]
    assert options == [param.opts for param in _group(app).commands[name].params]


@pytest.mark.parametrize("args", [[], ["--help"], ["--help", "run"]])
def test_the_top_level_help_reads_as_the_whole_command_lines(args: list[str]) -> None:
    listed = CliRunner().invoke(_asked(args), args)
    whole = CliRunner().invoke(full_app(), args)
    assert "Commands:" in listed.output and "grade-patches" in listed.output
    assert (listed.output, listed.exit_code) == (whole.output, whole.exit_code)


@pytest.mark.parametrize("args", [["rnu"], ["--version"], ["--", "runs"]])
def test_anything_else_gets_every_command(args: list[str]) -> None:
    assert _asked(args) is full_app()


def test_the_listing_has_every_command_and_group() -> None:
    assert list(_group(help_app()).commands) == [*COMMANDS, *GROUPS]
