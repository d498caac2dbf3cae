"""A work root too long for the tool server's Unix socket: in a sandbox without a network the
agent cannot reach its tools, so the attempt is not the agent's to fail. It ends as an error (a
fault of the set-up, left out of accuracy) whose cause says to give a shorter --work-root; with a
short work root the same agent passes."""

from __future__ import annotations

from pathlib import Path

from benchyard.store.store import Store
from tests.support import Cli, write_benchmark

AGENT = """
import http.client, json, os, socket

class Tools(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(os.environ["BENCHYARD_TOOLS_SOCKET"])

connection = Tools("tools")
connection.request("POST", "/call", json.dumps({"name": "lookup", "arguments": {"key": "k"}}))
print(json.loads(connection.getresponse().read())["result"])
"""


def _tool_benchmark(root: Path) -> Path:
    tool = {
        "name": "lookup",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}}},
        "responses": [{"result": "found-it"}],
    }
    scenario = {
        "id": "tool",
        "stimulus": "Look k up.",
        "tools": [tool],
        "checks": [{"type": "equals", "value": "found-it"}],
    }
    return write_benchmark(root, [scenario])


def test_a_work_root_too_long_for_the_socket_is_an_error_that_says_so(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = _tool_benchmark(tmp_path / "bench")
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    long_root = tmp_path / ("w" * 60)
    long_root.mkdir()
    short_root = Path("/tmp") / "bw"  # the sandbox's /tmp is its own: the host's is free to use
    short_root.mkdir(exist_ok=True)
    common = ("--agent-cmd", f"python3 {agent}", "--retries", "0", "-q")

    cli("run", str(bench), *common, "--work-root", str(long_root))
    [attempt] = store.attempts(store.resolve_run("latest").id)
    assert attempt.verdict == "error", attempt.cause  # not failed: not the agent's doing
    assert attempt.failure_kind == "sandbox_start"
    assert "give a shorter --work-root" in (attempt.cause or "")

    cli("run", str(bench), *common, "--work-root", str(short_root))
    [attempt] = store.attempts(store.resolve_run("latest").id)
    assert attempt.verdict == "passed", attempt.cause
