"""A preset as an agent: a command agent whose command, environment and readable paths come from
its definition; installed on first use (one line on stderr), or refused when installing fails."""

from __future__ import annotations

import sys
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchyard.agents.base import Agent
from benchyard.agents.command import CommandAgent, CommandAgentConfig
from benchyard.agents.presets import install as installing
from benchyard.agents.presets.definitions import PRESETS, Preset
from benchyard.providers.config import ModelConfig, ModelPrice, redacted_model_config


class PresetRefused(Exception):
    """The preset cannot be used as configured (its installer failed, another package named);
    the registry makes it an AgentConfigError."""


class PresetAgentConfig(BaseModel):
    """What benchyard.yaml says of a preset agent; `bridge` is required (it has no other model)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str
    bridge: ModelConfig = Field(
        description="The model it calls, through the attempt's model bridge (`provider: NAME`, "
        "`model`, ...), as for a command agent."
    )
    version: str | None = Field(
        default=None, min_length=1, description="The package's version (default: the pinned one)."
    )
    package: str | None = Field(
        default=None, description="Recorded with the run; when given, it must be the preset's."
    )
    args: str = Field(default="", description="More words for its command line, appended.")
    env: dict[str, str] = Field(default_factory=dict)
    pass_env: list[str] = Field(default_factory=list)
    readable: list[str] = Field(default_factory=list)
    prices: dict[str, ModelPrice] = Field(default_factory=dict)


class PresetAgent(CommandAgent):
    """A command agent (agents/command.py) made from a preset; it records its preset, package and
    version rather than the command it expands to."""

    def __init__(self, name: str, preset: Preset, config: PresetAgentConfig) -> None:
        version = config.version or preset.version
        program = installing.program_path(preset, version)
        model = config.bridge.model
        command = CommandAgentConfig(
            command=preset.command(str(program), model, config.args),
            env={**preset.environment(model), **config.env},
            pass_env=config.pass_env,
            readable=[str(installing.install_dir(preset, version)), *config.readable],
            bridge=config.bridge,
            prices=config.prices,
        )
        super().__init__(name, command)
        self.preset = preset
        self.preset_config = config
        self.version = version

    def describe(self) -> dict[str, Any]:
        dumped = self.preset_config.model_dump(mode="json")
        described = {key: value for key, value in dumped.items() if value not in ("", [], {}, None)}
        described.update(kind=self.preset.kind, package=self.preset.package, version=self.version)
        described["bridge"] = redacted_model_config(described["bridge"])
        return described


def build_preset(name: str, config: dict[str, Any]) -> Agent:
    """The agent `name` of a preset kind, installed first when it is not (one line on stderr);
    PresetRefused when the installer fails."""
    preset = PRESETS[str(config.get("kind"))]
    validated = PresetAgentConfig.model_validate(config)
    if validated.package not in (None, preset.package):
        raise PresetRefused(
            f"agent '{name}': package '{validated.package}' is not {preset.kind}'s "
            f"({preset.package})"
        )
    version = validated.version or preset.version
    if not installing.is_installed(preset, version):
        where = installing.install_dir(preset, version)
        sys.stderr.write(
            f"installing {preset.package} {version} ({preset.installer}) into {where}, once\n"
        )
        try:
            installing.install(preset, version)
        except installing.InstallFailed as error:
            raise PresetRefused(
                f"agent '{name}': could not install {preset.package} {version}: {error} "
                f"(try `benchyard agents install {preset.kind}`)"
            ) from None
    return PresetAgent(name, preset, validated)
