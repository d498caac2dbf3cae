"""Agent presets as configuration: the command each expands to, what a run records of it (enough to
build it again), installing on first use, and a failed install refused with one clear line. The
installs here are stand-ins in a temporary cache; tests/e2e/test_agent_presets.py runs the real
programs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchyard.agents.command import named_paths
from benchyard.agents.presets import PRESETS, Preset
from benchyard.agents.presets import install as installing
from benchyard.agents.presets.agent import PresetAgent
from benchyard.agents.registry import AgentConfigError, build_agent

BRIDGE = {"provider": {"base_url": "http://127.0.0.1:9/v1"}, "model": "m-1"}


def _fake_install(cache: Path, kind: str) -> Path:
    """The preset's install directory in `cache`, with its program and marker, as if installed."""
    preset = PRESETS[kind]
    directory = cache / f"{kind}-{preset.version}"
    program = directory / preset.program
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    (directory / installing.MARKER).write_text("", encoding="utf-8")
    return program


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(installing.CACHE_VARIABLE, str(tmp_path / "agents"))
    return tmp_path / "agents"


def test_mini_swe_agent_runs_unattended_on_the_bridge_model(cache: Path) -> None:
    program = _fake_install(cache, "mini-swe-agent")
    agent = build_agent("mini", {"kind": "mini-swe-agent", "bridge": BRIDGE})
    assert isinstance(agent, PresetAgent)
    command = agent.config.command
    assert command.startswith(f"{program} -y --exit-immediately ")
    assert "-m openai/m-1" in command and '"$BENCHYARD_INSTRUCTION_FILE"' in command
    # no interactive first-run setup, no cost lookup that fails on an unknown model
    assert agent.config.env["MSWEA_CONFIGURED"] == "true"
    assert agent.config.env["MSWEA_MODEL_NAME"] == "openai/m-1"
    assert agent.config.env["MSWEA_COST_TRACKING"] == "ignore_errors"
    # its program is named, so the sandbox follows its interpreter chain; its install is readable
    assert program in named_paths(command)
    assert agent.declared_readable == (program.parent.parent,)


def test_aider_removes_what_it_leaves_behind_and_keeps_its_exit_status(cache: Path) -> None:
    _fake_install(cache, "aider")
    agent = build_agent("aider", {"kind": "aider", "bridge": BRIDGE, "args": "--edit-format diff"})
    assert isinstance(agent, PresetAgent)
    command = agent.config.command
    assert "--no-git" in command and "--no-gitignore" in command and "--map-tokens 0" in command
    assert "--edit-format diff; status=$?; rm -rf -- ./.aider*; exit $status" in command


def test_codex_runs_without_its_own_sandbox_on_the_bridge_responses_api(cache: Path) -> None:
    program = _fake_install(cache, "codex")
    agent = build_agent("codex", {"kind": "codex", "bridge": BRIDGE})
    assert isinstance(agent, PresetAgent)
    command = agent.config.command
    assert command.startswith(f"{program} exec --skip-git-repo-check ")
    assert "--dangerously-bypass-approvals-and-sandbox" in command and "-m m-1" in command
    assert 'base_url="\\"$OPENAI_BASE_URL\\""' in command
    assert 'wire_api="responses"' in command
    assert agent.describe()["package"] == "@openai/codex"


def test_claude_code_runs_in_print_mode_without_asking(cache: Path) -> None:
    program = _fake_install(cache, "claude-code")
    agent = build_agent("claude", {"kind": "claude-code", "bridge": BRIDGE})
    assert isinstance(agent, PresetAgent)
    assert agent.config.command.startswith(f"{program} -p --dangerously-skip-permissions ")
    assert agent.config.env["ANTHROPIC_SMALL_FAST_MODEL"] == "m-1"
    assert agent.config.env["DISABLE_AUTOUPDATER"] == "1"


def test_qwen_code_approves_every_tool_call_on_the_bridge(cache: Path) -> None:
    program = _fake_install(cache, "qwen-code")
    agent = build_agent("qwen", {"kind": "qwen-code", "bridge": BRIDGE})
    assert isinstance(agent, PresetAgent)
    assert agent.config.command.startswith(f"{program} --yolo --auth-type openai -m m-1 ")
    assert agent.config.env["OPENAI_MODEL"] == "m-1"


def test_opencode_gets_its_provider_on_the_bridge_inline(cache: Path) -> None:
    _fake_install(cache, "opencode")
    agent = build_agent("oc", {"kind": "opencode", "bridge": BRIDGE})
    assert isinstance(agent, PresetAgent)
    config = json.loads(agent.config.env["OPENCODE_CONFIG_CONTENT"])
    provider = config["provider"]["benchyard"]
    assert provider["options"]["baseURL"] == "{env:OPENAI_BASE_URL}"
    assert list(provider["models"]) == ["m-1"] and config["model"] == "benchyard/m-1"
    assert config["permission"]["bash"] == "allow"
    assert " run -m benchyard/m-1 " in agent.config.command


def test_a_run_records_the_package_and_version_and_builds_the_agent_again(cache: Path) -> None:
    _fake_install(cache, "mini-swe-agent")
    config = {"kind": "mini-swe-agent", "bridge": BRIDGE, "env": {"X": "1"}}
    described = build_agent("mini", config).describe()
    assert described["package"] == "mini-swe-agent"
    assert described["version"] == PRESETS["mini-swe-agent"].version
    assert described["env"] == {"X": "1"} and "args" not in described
    again = build_agent("mini", described)
    assert again.describe() == described


def test_a_preset_not_installed_is_installed_on_first_use(
    cache: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    installed: list[str] = []

    def install(preset: Preset, version: str) -> Path:
        installed.append(f"{preset.package}=={version}")
        return _fake_install(cache, preset.kind)

    monkeypatch.setattr(installing, "install", install)
    build_agent("mini", {"kind": "mini-swe-agent", "bridge": BRIDGE})
    build_agent("mini", {"kind": "mini-swe-agent", "bridge": BRIDGE})
    assert installed == ["mini-swe-agent==2.4.6"]  # once
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("installing mini-swe-agent 2.4.6 (pip) into ")


def test_a_failed_install_refuses_the_agent(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def install(preset: Preset, version: str) -> Path:
        raise installing.InstallFailed("pip install exited with 1: no such version")

    monkeypatch.setattr(installing, "install", install)
    with pytest.raises(AgentConfigError) as refused:
        build_agent("mini", {"kind": "mini-swe-agent", "version": "0.0.1", "bridge": BRIDGE})
    message = str(refused.value)
    assert "could not install mini-swe-agent 0.0.1" in message and "no such version" in message


def test_a_preset_needs_its_bridge_and_its_own_package(cache: Path) -> None:
    _fake_install(cache, "mini-swe-agent")
    with pytest.raises(AgentConfigError, match="bridge"):
        build_agent("mini", {"kind": "mini-swe-agent"})
    with pytest.raises(AgentConfigError, match="not mini-swe-agent's"):
        build_agent("mini", {"kind": "mini-swe-agent", "bridge": BRIDGE, "package": "evil"})


def test_an_installer_failure_shows_its_error_lines() -> None:
    pip = (
        "Collecting x\n  Downloading...\nERROR: Could not find a version\n"
        "ERROR: No matching distribution found for x==0\n"
    )
    assert installing._why(pip) == (
        "ERROR: Could not find a version ERROR: No matching distribution found for x==0"
    )
    assert installing._why("a\nb\n" + "c" * 1000).endswith("c" * 10)


def test_a_declared_preset_gets_its_provider_and_absolute_readable_paths(
    cache: Path, tmp_path: Path
) -> None:
    from benchyard.config import load_config
    from benchyard.runner.api import resolve_agent

    _fake_install(cache, "aider")
    project = tmp_path / "project"
    project.mkdir()
    (project / "benchyard.yaml").write_text(
        "providers: {local: {base_url: 'http://127.0.0.1:9/v1'}}\n"
        "agents: {aider: {kind: aider, readable: [prompts], bridge: {provider: local, model: m}}}\n",
        encoding="utf-8",
    )
    agent = resolve_agent(load_config(project / "benchyard.yaml"), "aider", None)
    assert isinstance(agent, PresetAgent)
    assert agent.config.bridge is not None
    assert agent.config.bridge.provider.base_url == "http://127.0.0.1:9/v1"
    assert Path(agent.config.readable[-1]) == project / "prompts"
