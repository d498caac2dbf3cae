"""An installed agent runs in the default bwrap sandbox through its whole interpreter chain: a
script whose `#!` interpreter is a link into another installation (a virtualenv's `python` into a
pyenv prefix under a home directory), and an npm-style `node_modules/.bin` link whose package
reads a sibling package (a platform build). Each of those used to end in exit 127 or a missing
file, counted as the agent's failure."""

from __future__ import annotations

from pathlib import Path

from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _verdict(cli: Cli, store: Store, bench: Path, command: str) -> tuple[str, str]:
    result = cli("run", str(bench), "--agent-cmd", command, "-q")
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    return attempt.verdict, f"{result.output}\n{attempt.cause}\n{attempt.stderr}"


def test_a_script_whose_interpreter_links_into_another_installation_runs(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "answer-42")])
    # the base installation: an "interpreter" (itself a script) with a library beside it
    base = tmp_path / "pyenv" / "versions" / "3.99"
    _script(base / "lib" / "greeting", "echo answer-42\n")
    _script(base / "bin" / "interp", f'#!/bin/sh\n. {base}/lib/greeting\nexec /bin/sh "$@"\n')
    # the agent's environment: its interpreter is a link into the base, as a virtualenv's is
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "interp").symlink_to(base / "bin" / "interp")
    agent = _script(venv / "bin" / "agent", f"#!{venv}/bin/interp\n")
    verdict, evidence = _verdict(cli, store, bench, str(agent))
    assert verdict == "passed", evidence


def test_an_npm_bin_link_runs_with_its_sibling_packages(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("a", "answer-42")])
    modules = tmp_path / "app" / "node_modules"
    _script(modules / "agent-linux-x64" / "answer.sh", "echo answer-42\n")
    _script(
        modules / "agent" / "bin" / "agent.sh",
        f"#!/bin/sh\nexec /bin/sh {modules}/agent-linux-x64/answer.sh\n",
    )
    (modules / ".bin").mkdir()
    (modules / ".bin" / "agent").symlink_to("../agent/bin/agent.sh")
    verdict, evidence = _verdict(cli, store, bench, str(modules / ".bin" / "agent"))
    assert verdict == "passed", evidence
