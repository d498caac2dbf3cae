"""The presets, one declarative definition each: what to install, and how to run it unattended.

Every preset's command runs in the attempt's workdir, in benchyard's sandbox, with the command
agent's environment (a private `$HOME`, the protocol's files) and the model bridge's variables
(`OPENAI_BASE_URL`, `OPENAI_API_KEY`, ...): the task is the current user turn, read from
`$BENCHYARD_INSTRUCTION_FILE`, and `{model}` is the bridge's model name (the bridge sends its own
model to the provider whatever name the agent asks for).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

INSTRUCTION = '"$(cat "$BENCHYARD_INSTRUCTION_FILE")"'  # the current user turn, as one word


@dataclass(frozen=True)
class Preset:
    """One installable coding agent."""

    kind: str  # the `kind:` of benchyard.yaml, and the install directory's name
    package: str  # its name in the registry
    version: str  # the pinned default version
    installer: Literal["pip", "npm"]
    program: str  # the executable, relative to the install directory
    arguments: str  # shell words after the program; `{model}` is the bridge's model, quoted
    env: Mapping[str, str] = field(default_factory=dict)  # `{model}` filled in too
    # what it writes into the workdir that is no part of its change (shell patterns, relative to
    # the workdir): removed when it exits, before its change is collected
    leaves_behind: tuple[str, ...] = ()
    summary: str = ""

    def command(self, program: str, model: str, extra_arguments: str = "") -> str:
        """The shell command that runs it: `program` (its absolute path) and its arguments."""
        words = self.arguments.format(model=shlex.quote(model))
        command = " ".join(filter(None, [shlex.quote(program), words, extra_arguments.strip()]))
        if not self.leaves_behind:
            return command
        left = " ".join(self.leaves_behind)
        return f"{command}; status=$?; rm -rf -- {left}; exit $status"

    def environment(self, model: str) -> dict[str, str]:
        """Its variables, `{model}` replaced (and no other brace: a value may hold JSON)."""
        return {name: value.replace("{model}", model) for name, value in self.env.items()}


MINI_SWE_AGENT = Preset(
    kind="mini-swe-agent",
    package="mini-swe-agent",
    version="2.4.6",
    installer="pip",
    program="bin/mini",
    # -y: no confirmation of each command; --exit-immediately: no prompt when it is done;
    # -l 0: no cost limit of its own (benchyard's bridge holds the limits); its trajectory goes
    # to the private $HOME, never the workdir.
    arguments='-y --exit-immediately -l 0 -m openai/{model} -o "$HOME/mini.traj.json" -t '
    + INSTRUCTION,
    env={
        # without these three it blocks on its interactive first-run setup, or fails on a model
        # that litellm has no price for
        "MSWEA_CONFIGURED": "true",
        "MSWEA_MODEL_NAME": "openai/{model}",
        "MSWEA_COST_TRACKING": "ignore_errors",
        "MSWEA_SILENT_STARTUP": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of litellm's price list
    },
    summary="SWE-agent's 100-line agent: bash commands only (litellm, chat completions)",
)

AIDER = Preset(
    kind="aider",
    package="aider-chat",
    version="0.86.2",
    installer="pip",
    program="bin/aider",
    # --no-git: the workdir is no repository of aider's (else it makes one, and a .gitignore);
    # its histories go to the private $HOME; no repository map (its tags cache), no update check,
    # no analytics, every question answered yes.
    arguments="--model openai/{model} --yes-always --no-git --no-gitignore --map-tokens 0 "
    "--no-auto-commits --no-dirty-commits --no-check-update --no-show-release-notes "
    "--no-show-model-warnings --analytics-disable --no-pretty --no-fancy-input "
    '--chat-history-file "$HOME/.aider.chat.history.md" '
    '--input-history-file "$HOME/.aider.input.history" '
    '--llm-history-file "$HOME/.aider.llm.history" '
    '--message-file "$BENCHYARD_INSTRUCTION_FILE" '
    "$(find . -type f -not -path './.*' -not -path '*/__pycache__/*' | sort)",
    env={"AIDER_CHECK_UPDATE": "false", "AIDER_ANALYTICS": "false"},
    leaves_behind=("./.aider*",),
    summary="AI pair programming in the terminal (litellm, chat completions)",
)

CODEX = Preset(
    kind="codex",
    package="@openai/codex",
    version="0.171.0",
    installer="npm",
    program="node_modules/.bin/codex",
    # its own sandbox and approvals off (it cannot nest in benchyard's; the attempt's sandbox
    # holds it), no git repository needed; a provider of its own on the bridge's base URL with the
    # Responses API, the bridge token read from OPENAI_API_KEY; its config and sessions stay in
    # the private $HOME (~/.codex).
    arguments="exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox "
    "--color never -m {model} -c 'model_provider=\"benchyard\"' "
    "-c 'model_providers.benchyard.name=\"benchyard\"' "
    '-c model_providers.benchyard.base_url="\\"$OPENAI_BASE_URL\\"" '
    "-c 'model_providers.benchyard.env_key=\"OPENAI_API_KEY\"' "
    "-c 'model_providers.benchyard.wire_api=\"responses\"' " + INSTRUCTION,
    summary="OpenAI's coding agent (the Responses API)",
)

CLAUDE_CODE = Preset(
    kind="claude-code",
    package="@anthropic-ai/claude-code",
    version="2.1.332",
    installer="npm",
    program="node_modules/.bin/claude",
    # print mode (one task, no terminal), every tool allowed without asking (the attempt's
    # sandbox holds it); it reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY (the bridge's), and
    # keeps its settings and sessions in the private $HOME (~/.claude).
    arguments="-p --dangerously-skip-permissions --model {model} " + INSTRUCTION,
    env={
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",  # it is: --dangerously-skip-permissions is then allowed to any user
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "ANTHROPIC_SMALL_FAST_MODEL": "{model}",  # its side calls (titles, summaries) too
        "ANTHROPIC_DEFAULT_HAIKU_MODEL": "{model}",
    },
    summary="Anthropic's coding agent (Anthropic Messages)",
)

QWEN_CODE = Preset(
    kind="qwen-code",
    package="@qwen-code/qwen-code",
    version="0.24.4",
    installer="npm",
    program="node_modules/.bin/qwen",
    # every tool call allowed (the attempt's sandbox holds it), the OpenAI-compatible client on
    # OPENAI_BASE_URL and OPENAI_API_KEY (the bridge's); the task as its one-shot prompt; its
    # settings in the private $HOME (~/.qwen)
    arguments="--yolo --auth-type openai -m {model} " + INSTRUCTION,
    env={"OPENAI_MODEL": "{model}", "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"},
    summary="Qwen's coding agent (chat completions)",
)

# opencode's configuration, given inline: a provider of its own on the bridge (its base URL and
# token read from the environment when it starts), every permission allowed, no sharing, no
# automatic updates
_OPENCODE_CONFIG = (
    '{"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled", '
    '"permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"}, '
    '"model": "benchyard/{model}", "provider": {"benchyard": {"npm": "@ai-sdk/openai-compatible", '
    '"name": "benchyard", "options": {"baseURL": "{env:OPENAI_BASE_URL}", '
    '"apiKey": "{env:OPENAI_API_KEY}"}, "models": {"{model}": {}}}}}'
)

OPENCODE = Preset(
    kind="opencode",
    package="opencode-ai",
    version="1.18.33",
    installer="npm",
    program="node_modules/.bin/opencode",
    arguments="run -m benchyard/{model} " + INSTRUCTION,
    env={"OPENCODE_CONFIG_CONTENT": _OPENCODE_CONFIG, "OPENCODE_DISABLE_AUTOUPDATE": "1"},
    summary="sst's opencode (chat completions, through its OpenAI-compatible provider)",
)

PRESETS: dict[str, Preset] = {
    preset.kind: preset
    for preset in (MINI_SWE_AGENT, AIDER, CODEX, CLAUDE_CODE, QWEN_CODE, OPENCODE)
}
