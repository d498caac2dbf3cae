"""Registry of agent kinds. Built-ins: `command`, `openai`, `oracle`, and the presets of
agents/presets/ (`mini-swe-agent`, `aider`, `codex`,
`claude-code`, `qwen-code`, `opencode`); other packages add kinds through the
`benchyard.agents` entry-point group (each entry point is a factory `(name, config) -> Agent`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from benchyard.agents.base import Agent
from benchyard.agents.presets.definitions import PRESETS
from benchyard.errors import BenchyardError, field_problems

if TYPE_CHECKING:
    from benchyard.agents.command import CommandAgent

ENTRY_POINT_GROUP = "benchyard.agents"
AgentFactory = Callable[[str, dict[str, Any]], Agent]


class AgentConfigError(BenchyardError):
    """An agent declared in benchyard.yaml, or asked for on the command line, is not usable."""


def _command(name: str, config: dict[str, Any]) -> Agent:
    from benchyard.agents.command import CommandAgent, CommandAgentConfig

    return CommandAgent(name, CommandAgentConfig.model_validate(config))


def _oracle(name: str, config: dict[str, Any]) -> Agent:
    from benchyard.agents.oracle import OracleAgent

    return OracleAgent(name)


def _openai(name: str, config: dict[str, Any]) -> Agent:
    from benchyard.agents.openai import OpenAIAgent, OpenAIAgentConfig

    return OpenAIAgent(name, OpenAIAgentConfig.model_validate(config))


def _preset(name: str, config: dict[str, Any]) -> Agent:
    from benchyard.agents.presets.agent import PresetRefused, build_preset

    try:
        return build_preset(name, config)
    except PresetRefused as refused:
        raise AgentConfigError(str(refused)) from None


BUILTIN_KINDS: dict[str, AgentFactory] = {
    "command": _command,
    "openai": _openai,
    "oracle": _oracle,
    **{kind: _preset for kind in PRESETS},
}


def agent_kinds() -> dict[str, AgentFactory]:
    kinds = dict(BUILTIN_KINDS)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        kinds.setdefault(entry.name, entry.load())
    return kinds


def build_agent(name: str, config: dict[str, Any]) -> Agent:
    kind = str(config.get("kind", "command"))
    factory = BUILTIN_KINDS.get(kind) or agent_kinds().get(kind)
    if factory is None:
        known = ", ".join(sorted(agent_kinds()))
        raise AgentConfigError(f"agent '{name}': unknown kind '{kind}' (known: {known})")
    try:
        return factory(name, config)
    except ValidationError as error:
        raise AgentConfigError(f"agent '{name}': {field_problems(error)}") from None


def as_command_agent(agent: Agent) -> CommandAgent | None:
    """`agent` when it is a command agent (presets included), else None. A command agent was built
    by its module, so a run of another agent does not import that module to tell."""
    command = sys.modules.get("benchyard.agents.command")
    return agent if command is not None and isinstance(agent, command.CommandAgent) else None
