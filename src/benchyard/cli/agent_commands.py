"""`benchyard agents`: the agent kinds and presets, and installing a preset ahead of a run."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import ListFormatOption, check_list_format

if TYPE_CHECKING:
    from benchyard.report.outputs import AgentsOutput

agents_app = typer.Typer(
    name="agents",
    help="The agent kinds and presets (package, version, installed or not); `agents install "
    "NAME` installs a preset.",
    invoke_without_command=True,
    rich_markup_mode=None,
)


@agents_app.callback()
@handle_errors
def agents(context: typer.Context) -> None:
    """The agent kinds benchyard.yaml's `kind:` takes, and each preset's package, pinned version
    and whether it is installed (and where); the same as `agents list`."""
    if context.invoked_subcommand is None:
        _print_agents("table")


@agents_app.command("list")
@handle_errors
def agents_list(format: ListFormatOption = "table") -> None:
    """The agent kinds and presets (package, pinned version, installed or not, and where)."""
    check_list_format(format)
    _print_agents(format)


def _overview() -> AgentsOutput:
    from benchyard.agents.presets import PRESETS
    from benchyard.agents.presets.install import install_dir, is_installed
    from benchyard.agents.registry import agent_kinds
    from benchyard.report.outputs import AgentsOutput, PresetEntry

    presets = []
    for preset in PRESETS.values():
        installed = is_installed(preset, preset.version)
        presets.append(
            PresetEntry(
                kind=preset.kind,
                package=preset.package,
                version=preset.version,
                installer=preset.installer,
                installed=installed,
                path=str(install_dir(preset, preset.version)) if installed else None,
            )
        )
    kinds = sorted(kind for kind in agent_kinds() if kind not in PRESETS)
    return AgentsOutput(kinds=kinds, presets=presets)


def _print_agents(format: str) -> None:
    overview = _overview()
    if format == "json":
        from benchyard.report.listing import dump_json

        sys.stdout.write(dump_json(overview))
        return
    typer.echo("kinds: " + ", ".join(overview.kinds))
    rows = [("preset", "package", "version", "installer", "installed")]
    for preset in overview.presets:
        where = preset.path or "no"
        rows.append((preset.kind, preset.package, preset.version, preset.installer, where))
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        typer.echo("  ".join([*cells, row[-1]]).rstrip())


@agents_app.command("install")
@handle_errors
def install(
    name: Annotated[str, typer.Argument(help="The preset, e.g. mini-swe-agent.")],
    version: Annotated[
        str | None, typer.Option("--version", help="Another version than the pinned one.")
    ] = None,
    format: ListFormatOption = "table",
) -> None:
    """Install a preset into benchyard's agent cache (once; a run installs it on first use too).
    Exits 0 when it is installed, 2 when it is no preset or its installer fails."""
    from benchyard.agents.presets import PRESETS
    from benchyard.agents.presets.install import InstallFailed, install_dir, is_installed
    from benchyard.agents.presets.install import install as install_preset
    from benchyard.report.outputs import AgentInstalled

    check_list_format(format)
    preset = PRESETS.get(name)
    if preset is None:
        raise typer.BadParameter(
            f"'{name}' is no preset (presets: {', '.join(PRESETS)})", param_hint="NAME"
        )
    chosen = version or preset.version
    where = install_dir(preset, chosen)
    installed_now = not is_installed(preset, chosen)
    if installed_now:
        typer.echo(
            f"installing {preset.package} {chosen} ({preset.installer}) into {where}", err=True
        )
        try:
            install_preset(preset, chosen)
        except InstallFailed as error:
            typer.echo(f"error: could not install {preset.package} {chosen}: {error}", err=True)
            raise typer.Exit(2) from None
    if format == "json":
        from benchyard.report.listing import dump_json

        done = AgentInstalled(
            kind=preset.kind,
            package=preset.package,
            version=chosen,
            path=str(where),
            installed_now=installed_now,
        )
        sys.stdout.write(dump_json(done))
        return
    typer.echo(f"{preset.package} {chosen} is installed in {where}")
