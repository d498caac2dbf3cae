"""The project configuration, `benchyard.yaml`: the store to use, the agents a team runs, the
OpenAI-compatible providers they call, model prices and the judge model."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from benchyard.config_file import CONFIG_FILE as CONFIG_FILE
from benchyard.config_file import find_config as find_config
from benchyard.spec.problems import BenchmarkInvalid

MAX_AGENT_NAME = 200  # runs.agent_name


@functools.cache
def _webhooks_adapter() -> TypeAdapter[dict[str, Any]]:
    from benchyard.automation.webhook_config import WebhookConfig

    return TypeAdapter(dict[str, WebhookConfig])


def _validate_webhooks(value: object) -> dict[str, Any]:
    """`webhooks:` as dict[str, WebhookConfig] validates it (the same errors, at the same places),
    its models loaded only by a benchyard.yaml that has the key."""
    return _webhooks_adapter().validate_python(value)


if TYPE_CHECKING:
    from benchyard.automation.webhook_config import WebhookConfig

    Webhooks = dict[str, WebhookConfig]
else:
    Webhooks = Annotated[dict[str, Any], PlainValidator(_validate_webhooks)]


class ProjectConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    db: str | None = Field(default=None, description="SQLAlchemy URL of the store.")
    agents: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Agents by name.")

    @field_validator("agents")
    @classmethod
    def _names_fit_the_store(cls, agents: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name in agents:
            if len(name) > MAX_AGENT_NAME:
                raise ValueError(
                    f"agent name '{name[:40]}...' is {len(name)} characters; at most "
                    f"{MAX_AGENT_NAME} (what the store keeps)"
                )
        return agents

    providers: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="OpenAI-compatible endpoints by name (see providers/config.py).",
    )
    prices: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="USD per million tokens by model: {input_per_mtok, output_per_mtok}.",
    )
    judge: dict[str, Any] | None = Field(
        default=None, description="The judge model: provider, model and request settings."
    )
    webhooks: Webhooks = Field(
        default_factory=dict,
        description="Webhooks by name: signed events on runs (docs/automation.md#webhooks).",
    )
    base_dir: Path = Field(
        default_factory=Path.cwd, exclude=True, description="Where benchyard.yaml is."
    )

    @model_validator(mode="after")
    def _scripts_from_the_file(self) -> ProjectConfig:
        """A provider's `script` of canned replies, relative to benchyard.yaml (made absolute)."""
        for provider in self.providers.values():
            script = provider.get("script")
            if isinstance(script, str):
                provider["script"] = str(self.base_dir / script)
        return self


def load_config(path: Path | None) -> ProjectConfig:
    """Parse benchyard.yaml; problems are raised as BenchmarkInvalid with file, line and field."""
    if path is None:
        return ProjectConfig()
    from benchyard.spec.loader import ProblemCollector
    from benchyard.spec.source_files import SpecSyntaxError, read_yaml

    collector = ProblemCollector(path.parent)
    try:
        located = read_yaml(path)
    except SpecSyntaxError as error:
        collector.add(path, error.line, error.path, error.message)
        raise BenchmarkInvalid(collector.problems) from None
    if located.data is None:
        return ProjectConfig(base_dir=path.parent)
    if not isinstance(located.data, dict):
        collector.add(path, located.line, (), "expected a mapping with 'db' and 'agents'")
        raise BenchmarkInvalid(collector.problems)
    try:
        return ProjectConfig.model_validate({**located.data, "base_dir": path.parent})
    except ValidationError as error:
        collector.validation_errors(path, located, error)
        raise BenchmarkInvalid(collector.problems) from None


STARTER_CONFIG = """\
# benchyard project configuration. See docs/agent-protocol.md for the command-agent protocol.
# db: sqlite:///.benchyard/benchyard.db        # or postgresql://user@host/db; BENCHYARD_DB overrides
agents:
  # `benchyard run starter --agent example` runs this command once per user turn.
  example:
    kind: command
    command: python3 agent.py
    env: {}         # variables for the agent, with their values (recorded with each run)
    pass_env: []    # host variables passed by name, e.g. [OPENAI_API_KEY] (values never stored)
  # `--agent oracle` always exists: it replays each scenario's reference.
  # A model behind an OpenAI-compatible endpoint (see docs/models.md):
  # local-model:
  #   kind: openai
  #   provider: local
  #   model: qwen2.5-7b-instruct
# providers:                # keys are named by variable, never written here
#   local: {base_url: "http://127.0.0.1:8080/v1", api_key_env: LOCAL_API_KEY}
# judge: {provider: local, model: qwen2.5-7b-instruct}   # for llm_rubric and reference_match
# prices:                                               # USD per million tokens
#   qwen2.5-7b-instruct: {input_per_mtok: 0.0, output_per_mtok: 0.0}
"""

STARTER_AGENT = '''\
"""A minimal command agent: reads the current user turn, answers on stdout."""
import os

question = open(os.environ["BENCHYARD_INSTRUCTION_FILE"], encoding="utf-8").read()
print("I do not know yet: " + question[:60])
'''
