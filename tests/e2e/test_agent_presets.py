"""Agent presets end to end: a real coding-agent CLI, installed from PyPI into benchyard's agent
cache, fixes two bugs through `benchyard run BENCH --agent NAME` in the default bwrap sandbox with
the default network (its model bridge only), against benchyard's fake model server with scripted
replies; the verdicts are right, every model call the server saw is in the trajectory with its
tokens and time to first token, and the run records the preset's package and version.

Codex CLI and Claude Code come from npm. `make test` installs the presets first (`benchyard
agents install NAME`), so that the tests do not download during the run; without it the test
installs them (minutes). The claude-code case also checks the fake server reads Claude Code's
requests (`/v1/messages?beta=true`, a `system` message among its messages)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchyard.agents.presets import PRESETS
from benchyard.agents.presets.install import install
from benchyard.providers.fake_server import FakeLLM
from benchyard.store.store import Store
from tests.support import Cli, write_benchmark

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]

KEY_VARIABLE = "BENCHYARD_TEST_PRESET_KEY"
REAL_KEY = "sk-real-provider-key-preset-51c2"

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n"
TESTS = """import unittest

from calc import add, mul


class TestAdd(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)


class TestMul(unittest.TestCase):
    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)
"""
# Each scenario's bug, the task that names it, and the sed command that fixes it.
BUGS = {
    "fix-add": ("add() in calc.py subtracts; make it add", "s/a - b/a + b/", "TestAdd.test_add"),
    "fix-mul": (
        "mul() in calc.py adds; make it multiply",
        "s/return a + b$/return a * b/",
        "TestMul.test_mul",
    ),
}


def _benchmark(root: Path) -> Path:
    files = {
        "scenarios/repo/calc.py": CALC,
        "scenarios/repo/tests/__init__.py": "",
        "scenarios/repo/tests/test_calc.py": TESTS,
    }
    scenarios: list[dict[str, Any]] = [
        {
            "id": sid,
            "category": "coding",
            "stimulus": {"task": f"{task}. Do not change the tests."},
            "fixtures": {
                "files": [{"src": "repo", "dest": "."}],
                "verification": [{"src": "repo/tests", "dest": "tests"}],
            },
            "checks": [
                {"type": "tests", "fail_to_pass": [test]},
                {"type": "diff_quality", "allowed_paths": ["calc.py"]},
            ],
            "limits": {"timeout_sec": 240},
        }
        for sid, (task, _, test) in BUGS.items()
    ]
    return write_benchmark(root, scenarios, files=files)


def _project(work: Path, url: str, kind: str) -> None:
    config = {
        "providers": {"fake": {"base_url": url, "api_key_env": KEY_VARIABLE, "max_retries": 1}},
        "prices": {"preset-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
        "agents": {
            "coder": {"kind": kind, "bridge": {"provider": "fake", "model": "preset-model"}}
        },
    }
    (work / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def _mini_swe_agent_script() -> dict[str, Any]:
    """mini-swe-agent calls a `bash` tool: first the fix, then its command to submit (the
    observation of the fix, `"returncode": 0`, is the last message then)."""
    fixes = [
        {"match": task, "content": "Fixing it.", "tool_calls": [
            {"name": "bash", "arguments": {"command": f"sed -i '{sed}' calc.py"}}]}
        for task, sed, _ in BUGS.values()
    ]  # fmt: skip
    submit = {
        "name": "bash",
        "arguments": {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"},
    }
    return {
        "replies": [*fixes, {"match": "returncode", "content": "Done.", "tool_calls": [submit]}]
    }


def _aider_script() -> dict[str, Any]:
    """aider edits in its `whole` format (the default for a model it does not know): the file's
    name, then its whole new content in a fenced block; one call per task."""
    fixed = {
        "fix-add": CALC.replace("a - b", "a + b"),
        "fix-mul": CALC.replace("return a + b", "return a * b"),
    }
    return {
        "replies": [
            {"match": task, "content": f"calc.py\n```python\n{fixed[sid]}```\n"}
            for sid, (task, _, _) in BUGS.items()
        ]
    }


def _codex_script() -> dict[str, Any]:
    """Codex CLI (the Responses API) calls its `exec_command` tool with the fix, then ends its turn
    with a message once the command's output (its last input item) says it exited with 0."""
    fixes = [
        {"match": task, "content": "Fixing it.", "tool_calls": [
            {"name": "exec_command", "arguments": {"cmd": f"sed -i '{sed}' calc.py"}}]}
        for task, sed, _ in BUGS.values()
    ]  # fmt: skip
    return {"replies": [*fixes, {"match": "exited with code 0", "content": "Fixed."}]}


def _claude_code_script() -> dict[str, Any]:
    """Claude Code (Anthropic Messages) calls its `Bash` tool with the fix, then ends its turn
    with a message (the reply to anything else: the command's empty output)."""
    fixes = [
        {"match": task, "content": "Fixing it.", "tool_calls": [
            {"name": "Bash", "arguments": {"command": f"sed -i '{sed}' calc.py",
                                           "description": "Fix the bug"}}]}
        for task, sed, _ in BUGS.values()
    ]  # fmt: skip
    return {"replies": fixes, "default": {"content": "Fixed."}}


def _qwen_code_script() -> dict[str, Any]:
    """qwen-code refuses a `sed -i` on a file it has not read (and reads only absolute paths), so
    its shell tool fixes the bug with Python; then it ends its turn with a message."""
    edits = {"fix-add": ("a - b", "a + b"), "fix-mul": ("return a + b", "return a * b")}
    fixes = []
    for sid, (task, _, _) in BUGS.items():
        old, new = edits[sid]
        command = (
            "python3 -c \"import pathlib; p = pathlib.Path('calc.py'); "
            f"p.write_text(p.read_text().replace('{old}', '{new}'))\""
        )
        call = {"name": "run_shell_command", "arguments": {"command": command}}
        fixes.append({"match": task, "content": "Fixing it.", "tool_calls": [call]})
    return {"replies": fixes, "default": {"content": "Fixed."}}


def _opencode_script() -> dict[str, Any]:
    """opencode asks for a title first (a side call, no tools: the reply is ignored), then calls
    its `bash` tool with the fix, then ends its turn with a message."""
    fixes = [
        {"match": task, "content": "Fixing it.", "tool_calls": [
            {"name": "bash", "arguments": {"command": f"sed -i '{sed}' calc.py",
                                           "description": "Fix the bug"}}]}
        for task, sed, _ in BUGS.values()
    ]  # fmt: skip
    return {"replies": fixes, "default": {"content": "Fixed."}}


SCRIPTS = {
    "mini-swe-agent": _mini_swe_agent_script,
    "aider": _aider_script,
    "codex": _codex_script,
    "claude-code": _claude_code_script,
    "qwen-code": _qwen_code_script,
    "opencode": _opencode_script,
}
# mini-swe-agent: the fix, then its submit command; the others: the fix, then a closing message
CALLS_PER_TASK = {
    "mini-swe-agent": 2,
    "aider": 1,
    "codex": 2,
    "claude-code": 2,
    "qwen-code": 2,
    "opencode": 3,  # its title first
}
# the API each speaks, as the bridge saw it
API = {
    "mini-swe-agent": "chat",
    "aider": "chat",
    "codex": "responses",
    "claude-code": "messages",
    "qwen-code": "chat",
    "opencode": "chat",
}


@pytest.mark.parametrize("kind", list(SCRIPTS))
def test_a_preset_fixes_bugs_through_the_bridge(
    kind: str, cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    preset = PRESETS[kind]
    install(preset, preset.version)  # at once when `make test` installed it
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    bench = _benchmark(tmp_path / "bench")
    with FakeLLM(SCRIPTS[kind]()) as llm:
        _project(cli.cwd, llm.url, kind)
        result = cli("run", str(bench), "--agent", "coder", "--retries", "0", "-q")
        requests = list(llm.requests)
    assert result.exit_code in (0, 1) and "run " in result.output, result.output
    run = store.resolve_run("latest")
    attempts = store.attempts(run.id, with_evidence=True)
    verdicts = {a.scenario_id: (a.verdict, a.cause, (a.stderr or "")[-800:]) for a in attempts}
    assert result.exit_code == 0, (result.output, verdicts)
    assert {sid: v[0] for sid, v in verdicts.items()} == dict.fromkeys(BUGS, "passed"), verdicts
    assert run.agent_config["package"] == preset.package
    assert run.agent_config["version"] == preset.version
    calls = [
        event
        for attempt in attempts
        for event in attempt.trajectory or []
        if event.data and event.data.get("via") == "bridge" and event.data.get("source") == "model"
    ]
    assert len(calls) == len(requests) == CALLS_PER_TASK[kind] * len(BUGS)
    for event in calls:
        assert event.tokens_in and event.tokens_out and event.ttft_sec is not None
        assert event.data and event.data["api"] == API[kind]
    for attempt in attempts:
        assert attempt.patch and "calc.py" in attempt.patch and ".aider" not in attempt.patch
    # ATIF names the agent's version: the preset's package version
    out = tmp_path / "atif"
    assert cli("export", run.id, "--format", "atif", "-o", str(out)).exit_code == 0
    entry = json.loads((out / "index.json").read_text())["trajectories"][0]
    document = json.loads((out / entry["file"]).read_text())
    assert document["agent"]["version"] == preset.version


def test_agents_lists_the_kinds_and_every_preset(cli: Cli) -> None:
    listed = cli("agents", db=False)
    assert listed.exit_code == 0, listed.output
    assert listed.output.startswith("kinds: command, openai, oracle")
    for preset in PRESETS.values():
        assert any(
            line.split()[:3] == [preset.kind, preset.package, preset.version]
            for line in listed.output.splitlines()
        ), listed.output
    refused = cli("agents", "install", "no-such-agent", db=False)
    assert refused.exit_code == 2 and "is no preset" in refused.output
