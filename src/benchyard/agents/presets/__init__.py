"""Agent presets: coding-agent CLIs (mini-swe-agent, aider, ...) declared by `kind:` alone.

A preset is a small declarative definition (definitions.py): the package and its pinned default
version, how it is installed once into a cache the sandbox may read (install.py), the command
line that runs it unattended in benchyard's sandbox against the attempt's model bridge, and the
files it leaves behind that are no part of its change. Underneath, each is a command agent
(agents/command.py): the bridge, the sandbox, the protocol and the trajectory are the same.
"""

from __future__ import annotations

from benchyard.agents.presets.definitions import PRESETS, Preset

__all__ = ["PRESETS", "Preset"]
