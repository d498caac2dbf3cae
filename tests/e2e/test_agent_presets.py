"""Agent presets end to end: a real coding-agent CLI, installed from PyPI into benchyard's agent
cache, fixes two bugs through `benchyard run BENCH --agent NAME` in the default bwrap sandbox with
the default network (its model bridge only), against benchyard's fake model server with scripted
replies; the verdicts are right, every model call the server saw is in the trajectory with its
tokens, time to first token and cost (from the project's prices), and so in `show`, the web UI's
attempt page and the ATIF export; the run records the preset's package and version, and the real
key is in none of the agent's output, trajectory or kept workdir.

Codex CLI and Claude Code come from npm. `make test` installs the presets first (`benchyard
agents install NAME`), so that the tests do not download during the run; without it the test
installs them (minutes). The claude-code case also checks the fake server reads Claude Code's
requests (`/v1/messages?beta=true`, a `system` message among its messages)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchyard.agents.presets import PRESETS
from benchyard.agents.presets.install import install
from benchyard.providers.fake_server import FakeLLM
from benchyard.runner.trajectory import Event
from benchyard.store.records import AttemptRecord, RunRecord
from benchyard.store.store import Store
from tests.integration.web.support import served
from tests.support import Cli, write_benchmark

pytestmark = [
    pytest.mark.slow,
    pytest.mark.store_in_passing,  # the agents' CLIs through their presets; the store only records
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


def _fix(sed: str) -> str:
    """The shell command that fixes a bug, then prints the agent's environment: its output goes
    to the model, so the trajectory shows the real key was not in it."""
    return f"sed -i '{sed}' calc.py && env"


def _mini_swe_agent_script() -> dict[str, Any]:
    """mini-swe-agent calls a `bash` tool: first the fix, then its command to submit (the
    observation of the fix, `"returncode": 0`, is the last message then)."""
    fixes = [
        {"match": task, "content": "Fixing it.", "tool_calls": [
            {"name": "bash", "arguments": {"command": _fix(sed)}}]}
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
            {"name": "exec_command", "arguments": {"cmd": _fix(sed)}}]}
        for task, sed, _ in BUGS.values()
    ]  # fmt: skip
    return {"replies": [*fixes, {"match": "exited with code 0", "content": "Fixed."}]}


def _claude_code_script() -> dict[str, Any]:
    """Claude Code (Anthropic Messages) calls its `Bash` tool with the fix, then ends its turn
    with a message (the reply to anything else: the command's empty output)."""
    fixes = [
        {"match": task, "content": "Fixing it.", "tool_calls": [
            {"name": "Bash", "arguments": {"command": _fix(sed),
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
            {"name": "bash", "arguments": {"command": _fix(sed),
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
# the presets whose fix is `_fix`'s command (aider's is an edit; qwen-code's runs Python)
PRINT_THEIR_ENVIRONMENT = {"mini-swe-agent", "codex", "claude-code", "opencode"}
# the API each speaks, as the bridge saw it
API = {
    "mini-swe-agent": "chat",
    "aider": "chat",
    "codex": "responses",
    "claude-code": "messages",
    "qwen-code": "chat",
    "opencode": "chat",
}


@pytest.fixture
def kept() -> Iterator[list[Path]]:
    """The directories a run kept its attempts' workdirs in (`--keep-workdirs`, under the default
    work root: a longer one makes the bridge's socket path too long), removed at the end."""
    directories: list[Path] = []
    yield directories
    for directory in directories:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("kind", list(SCRIPTS))
def test_a_preset_fixes_bugs_through_the_bridge(
    kind: str,
    cli: Cli,
    store: Store,
    tmp_path: Path,
    kept: list[Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    preset = PRESETS[kind]
    install(preset, preset.version)  # at once when `make test` installed it
    monkeypatch.setenv(KEY_VARIABLE, REAL_KEY)
    bench = _benchmark(tmp_path / "bench")
    with FakeLLM(SCRIPTS[kind]()) as llm:
        _project(cli.cwd, llm.url, kind)
        result = cli(
            "run", str(bench), "--agent", "coder", "--retries", "0", "-q", "--keep-workdirs"
        )
        requests = list(llm.requests)
    assert result.exit_code in (0, 1) and "run " in result.output, result.output
    kept_in = re.search(r"kept \d+ workdirs in (\S+)/work ", result.output)
    assert kept_in, result.output
    kept.append(Path(kept_in[1]))
    run = store.resolve_run("latest")
    attempts = store.attempts(run.id, with_evidence=True)
    verdicts = {a.scenario_id: (a.verdict, a.cause, (a.stderr or "")[-800:]) for a in attempts}
    assert result.exit_code == 0, (result.output, verdicts)
    assert {sid: v[0] for sid, v in verdicts.items()} == dict.fromkeys(BUGS, "passed"), verdicts
    assert run.agent_config["package"] == preset.package
    assert run.agent_config["version"] == preset.version
    calls = {attempt.scenario_id: _model_calls(attempt) for attempt in attempts}
    every_call = [event for events in calls.values() for event in events]
    assert len(every_call) == len(requests) == CALLS_PER_TASK[kind] * len(BUGS)
    for event in every_call:
        assert event.tokens_in and event.tokens_out and event.ttft_sec is not None
        assert event.cost_usd == pytest.approx(_priced(event))
        assert event.data and event.data["api"] == API[kind]
    for attempt in attempts:
        assert attempt.patch and "calc.py" in attempt.patch and ".aider" not in attempt.patch
    _shown_by_show(cli, run, calls)
    _shown_on_the_attempt_page(store, cli.cwd, attempts, calls)
    _exported_as_atif(cli, run, preset.version, calls, tmp_path / "atif")
    _key_nowhere(attempts, kept[0], environment_shown=kind in PRINT_THEIR_ENVIRONMENT)


def _model_calls(attempt: AttemptRecord) -> list[Event]:
    """The model calls the bridge relayed in an attempt, in order."""
    return [
        event
        for event in attempt.trajectory or []
        if event.data and event.data.get("via") == "bridge" and event.data.get("source") == "model"
    ]


def _priced(event: Event) -> float:
    """A call's cost at the project's prices for preset-model ($1 in, $2 out per Mtok)."""
    return ((event.tokens_in or 0) * 1.0 + (event.tokens_out or 0) * 2.0) / 1e6


def _figures(event: Event) -> tuple[int, int, str]:
    return event.tokens_in or 0, event.tokens_out or 0, f"${event.cost_usd:.4f}"


def _shown_by_show(cli: Cli, run: RunRecord, calls: dict[str, list[Event]]) -> None:
    """`show RUN SCENARIO` gives each call's tokens, TTFT and cost on its line; as JSON, too."""
    for scenario, events in calls.items():
        shown = cli("show", run.id, scenario)
        assert shown.exit_code == 0, shown.output
        lines = re.findall(
            r"\[(\d+)/(\d+) tok, ttft [\d.]+s, latency [\d.]+s, (\$[\d.]+)\]", shown.output
        )
        assert [(int(i), int(o), cost) for i, o, cost in lines] == list(map(_figures, events))
        as_json = cli("show", run.id, scenario, "--format", "json")
        assert as_json.exit_code == 0, as_json.output
        (attempt,) = json.loads(as_json.output)["attempts"]
        listed = [e for e in attempt["trajectory"] if e.get("data", {}).get("via") == "bridge"]
        wanted = ("tokens_in", "tokens_out", "ttft_sec", "cost_usd")
        assert [[e.get(name) for name in wanted] for e in listed] == [
            [event.tokens_in, event.tokens_out, event.ttft_sec, event.cost_usd] for event in events
        ]


def _shown_on_the_attempt_page(
    store: Store, workdir: Path, attempts: list[AttemptRecord], calls: dict[str, list[Event]]
) -> None:
    """The web UI's attempt page (the drawer) heads each call with its tokens, cost and TTFT."""
    head = r'(\d+)/(\d+) tok</span>\s*<span class="small">(\$[\d.]+)</span>\s*<span class="small">TTFT '
    with served(store, workdir) as server:
        for attempt in attempts:
            page = server.get(f"/attempts/{attempt.id}")
            assert page.status_code == 200, page.text
            heads = re.findall(head, page.text)
            expected = list(map(_figures, calls[attempt.scenario_id]))
            assert [(int(i), int(o), cost) for i, o, cost in heads] == expected


def _exported_as_atif(
    cli: Cli, run: RunRecord, version: str, calls: dict[str, list[Event]], out: Path
) -> None:
    """Each call is an agent step with its tokens, cost and TTFT, under the agent's name and
    version (the preset's package version)."""
    assert cli("export", run.id, "--format", "atif", "-o", str(out)).exit_code == 0
    for entry in json.loads((out / "index.json").read_text())["trajectories"]:
        document = json.loads((out / entry["file"]).read_text())
        assert document["agent"]["name"] == run.agent_name
        assert document["agent"]["version"] == version
        metrics = [step["metrics"] for step in document["steps"] if "metrics" in step]
        assert metrics == [
            {
                "prompt_tokens": event.tokens_in,
                "completion_tokens": event.tokens_out,
                "cost_usd": event.cost_usd,
                "extra": {"ttft_sec": event.ttft_sec, "latency_sec": event.latency_sec},
            }
            for event in calls[entry["scenario_id"]]
        ]


def _key_nowhere(attempts: list[AttemptRecord], work_root: Path, environment_shown: bool) -> None:
    """The real key reached neither the agent's output and trajectory (with the environment its
    command printed, where it printed it) nor its workdir."""
    for attempt in attempts:
        trajectory = json.dumps([event.to_dict() for event in attempt.trajectory or []])
        assert not environment_shown or "PATH=" in trajectory, "no environment printed"
        for text in (attempt.stdout, attempt.stderr, attempt.answer, attempt.patch, trajectory):
            assert REAL_KEY not in (text or "")
    kept = [path for path in work_root.rglob("*") if path.is_file() and not path.is_symlink()]
    assert kept, f"no workdir kept under {work_root}"
    for path in kept:
        assert REAL_KEY.encode() not in path.read_bytes(), path


def test_agents_lists_the_kinds_and_every_preset(storeless_cli: Cli) -> None:
    listed = storeless_cli("agents")
    assert listed.exit_code == 0, listed.output
    assert listed.output.startswith("kinds: command, openai, oracle")
    for preset in PRESETS.values():
        assert any(
            line.split()[:3] == [preset.kind, preset.package, preset.version]
            for line in listed.output.splitlines()
        ), listed.output
    refused = storeless_cli("agents", "install", "no-such-agent")
    assert refused.exit_code == 2 and "is no preset" in refused.output
