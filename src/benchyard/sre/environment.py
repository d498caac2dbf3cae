"""The `sre` tool environment: a scenario's `environment: {type: sre, ...}` is an incident
(`incident.IncidentSpec`), simulated into a cluster (`world.py`) that the tools (`tools.py`)
answer from."""

from __future__ import annotations

from collections.abc import Sequence

from benchyard.sre.faults import FaultError
from benchyard.sre.incident import IncidentSpec
from benchyard.sre.tools import TOOL_NAMES, SreTool, tools_for
from benchyard.sre.world import build_world


class SreEnvironment:
    name = "sre"
    params = IncidentSpec
    tool_names = TOOL_NAMES

    def check(self, params: IncidentSpec) -> str | None:
        try:
            build_world(params)
        except (FaultError, KeyError) as error:
            return f"cannot simulate this incident: {error}"
        return None

    def tools(self, params: IncidentSpec) -> Sequence[SreTool]:
        return tools_for(build_world(params))


ENVIRONMENT = SreEnvironment()
