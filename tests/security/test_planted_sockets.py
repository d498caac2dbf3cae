"""Hostile agents: an agent that fails and puts a directory where benchyard's socket was in its
io dir (the model bridge's `bridge.sock`) must not turn its failure into an uncounted harness
error by making the attempt's end trip over it (IsADirectoryError): its failure counts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from benchyard.providers.fake_server import FakeLLM
from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

PLANTER = """
import os
io_dir = os.path.dirname(os.environ["BENCHYARD_INSTRUCTION_FILE"])
os.unlink(os.path.join(io_dir, "bridge.sock"))
os.mkdir(os.path.join(io_dir, "bridge.sock"))
print("not the answer")
"""


def test_a_bridge_socket_replaced_by_the_agent_leaves_its_failure_counted(
    cli: Cli, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHYARD_TEST_PLANTED_KEY", "sk-planted")
    (tmp_path / "agent.py").write_text(PLANTER, encoding="utf-8")
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "ok")])
    with FakeLLM({"default": {"content": "ok"}}) as llm:
        provider = {"base_url": llm.url, "api_key_env": "BENCHYARD_TEST_PLANTED_KEY"}
        config = {"providers": {"fake": provider}}
        (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        command = f"python3 {tmp_path / 'agent.py'}"
        result = cli("run", str(bench), "--agent-cmd", command, "--bridge", "fake/m", "-q")
    assert result.exit_code == 0, result.output  # graded: not 3, nothing graded (all errors)
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert attempt.verdict == "failed", (attempt.cause, attempt.stderr)
