"""Choosing the sandbox: the default, the record on the run, and the refusals, each one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark


def _one_line_error(result: object, text: str) -> None:
    output = getattr(result, "output", "")
    assert getattr(result, "exit_code", None) == 2, output
    assert output.count("\n") == 1, output
    assert output.startswith("error: ") and text in output, output
    assert "Traceback" not in output


def test_bwrap_is_the_default_and_recorded_on_the_run(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    result = cli("run", str(bench), "--agent-cmd", "echo x", "-q")
    assert result.exit_code == 0, result.output
    run = store.resolve_run("latest")
    assert (run.settings["sandbox"], run.settings["allow_unsandboxed"]) == ("bwrap", False)
    assert [a.verdict for a in store.attempts(run.id)] == ["passed"]


def test_agent_commands_without_a_sandbox_are_refused(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    result = cli("run", str(bench), "--agent-cmd", "echo x", "--sandbox", "none", "-q")
    _one_line_error(
        result,
        "refusing to run agent commands on this host without a sandbox (--sandbox none); "
        "choose --sandbox bwrap or docker, or pass --allow-unsandboxed",
    )
    assert store.list_runs() == []


def test_allow_unsandboxed_runs_on_the_host(tmp_path: Path, cli: Cli, store: Store) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    witness = tmp_path / "ran-on-the-host"
    command = f"touch {witness}; echo x"
    result = cli(
        "run", str(bench), "--agent-cmd", command, "--sandbox", "none", "--allow-unsandboxed"
    )
    assert result.exit_code == 0, result.output
    assert witness.exists()
    run = store.resolve_run("latest")
    assert (run.settings["sandbox"], run.settings["allow_unsandboxed"]) == ("none", True)


def test_model_written_code_without_a_sandbox_is_refused(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    coding = scenario("code", "def f():\n    return 1\n")
    coding["checks"] = [{"type": "code_exec", "tests": "assert f() == 1"}]
    bench = write_benchmark(tmp_path / "bench", [coding])
    result = cli("run", str(bench), "--agent", "oracle", "--sandbox", "none", "-q")
    _one_line_error(result, "refusing to run model-written code (checks: code_exec)")
    assert store.list_runs() == []


def test_nothing_to_execute_needs_no_sandbox(tmp_path: Path, cli: Cli, store: Store) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    result = cli("run", str(bench), "--agent", "oracle", "--sandbox", "none", "-q")
    assert result.exit_code == 0, result.output
    assert [a.verdict for a in store.attempts(store.resolve_run("latest").id)] == ["passed"]


def test_unknown_sandbox_is_one_line(tmp_path: Path, cli: Cli) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    result = cli("run", str(bench), "--agent-cmd", "echo x", "--sandbox", "jail", "-q")
    _one_line_error(result, "unknown sandbox 'jail' (known: bwrap, docker, none)")


def test_without_bubblewrap_the_default_is_none_and_refused(
    tmp_path: Path, cli: Cli, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap to be found
    asked = cli("run", str(bench), "--agent-cmd", "echo x", "--sandbox", "bwrap", "-q")
    _one_line_error(asked, "bubblewrap is not installed (apt-get install bubblewrap)")
    default = cli("run", str(bench), "--agent-cmd", "echo x", "-q")  # never typed --sandbox none
    _one_line_error(default, "without a sandbox: bubblewrap, the default sandbox, is not installed")
    assert "apt-get install bubblewrap" in default.output
    assert store.list_runs() == []


def test_a_missing_docker_image_stops_the_run_before_it_starts(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(
        tmp_path / "bench",
        [scenario("a", "x", sandbox={"image": "benchyard/no-such-image:0"})],
    )
    result = cli("run", str(bench), "--agent-cmd", "echo x", "--sandbox", "docker", "-q")
    _one_line_error(
        result, "docker image 'benchyard/no-such-image:0' is not on this machine and benchyard"
    )
    assert store.list_runs() == []


def test_rerun_keeps_the_sandbox_unless_told(tmp_path: Path, cli: Cli, store: Store) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "x")])
    first = cli("run", str(bench), "--agent-cmd", "echo wrong", "--sandbox", "docker", "-q")
    assert first.exit_code == 0, first.output
    again = cli("rerun", "latest", "--failed", "-q")
    assert again.exit_code == 0, again.output
    assert store.resolve_run("latest").settings["sandbox"] == "docker"
    refused = cli("rerun", "latest", "--failed", "--sandbox", "none", "-q")
    assert refused.exit_code == 2
    assert "refusing to run agent commands" in refused.output
