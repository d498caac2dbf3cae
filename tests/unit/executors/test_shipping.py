"""What travels to Ray nodes: bundles named by content, unpacked once and checked, the agent's own
code chosen as the sandbox would show it, and its paths rewritten where a node unpacked it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from benchyard.benchmarks.loader import load_benchmark
from benchyard.executors.ray.shipping import (
    ShippingError,
    code_to_ship,
    only_entry,
    pack_benchmark,
    pack_code,
    relocated,
    relocated_agent_config,
    unpacked,
)
from tests.support import scenario, write_benchmark


def _bench(root: Path) -> Path:
    bench = write_benchmark(
        root,
        [scenario("a", "x", fixtures={"files": [{"src": "../repo", "dest": "."}]})],
        files={"repo/main.py": "print(1)\n", "repo/.git/HEAD": "ref\n", "repo/.env": "K=1\n"},
    )
    (bench / ".git").mkdir()
    (bench / ".git" / "objects").write_text("big history", encoding="utf-8")
    (bench / "__pycache__").mkdir()
    (bench / "__pycache__" / "x.pyc").write_bytes(b"\0")
    (bench / "repo" / "link").symlink_to("main.py")
    (bench / "repo" / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (bench / "repo" / "run.sh").chmod(0o755)
    return bench


def test_a_benchmark_packs_to_the_same_bytes_and_unpacks_to_its_content_hash(
    tmp_path: Path,
) -> None:
    bench = _bench(tmp_path / "bench")
    first, again = pack_benchmark(bench), pack_benchmark(bench)
    assert first.sha256 == again.sha256 and first.data == again.data
    os.utime(bench / "repo" / "main.py", (1, 1))  # times are not packed
    assert pack_benchmark(bench).sha256 == first.sha256
    fetched: list[int] = []

    def fetch() -> bytes:
        fetched.append(1)
        return first.data

    cache = tmp_path / "cache"
    directory = unpacked("bench", first.sha256, fetch, cache)
    assert unpacked("bench", first.sha256, fetch, cache) == directory
    assert fetched == [1]  # fetched once, then found in the node's cache
    copy = only_entry(directory)
    assert load_benchmark(str(copy)).content_hash == load_benchmark(str(bench)).content_hash
    assert (copy / "repo" / ".git" / "HEAD").is_file()  # a fixture's own repository travels
    assert (copy / "repo" / ".env").is_file()
    assert not (copy / ".git").exists() and not (copy / "__pycache__").exists()
    assert (copy / "repo" / "link").is_symlink() and os.readlink(
        copy / "repo" / "link"
    ) == "main.py"
    assert os.access(copy / "repo" / "run.sh", os.X_OK)
    (bench / "repo" / "main.py").write_text("print(2)\n", encoding="utf-8")
    assert pack_benchmark(bench).sha256 != first.sha256


def test_a_bundle_that_arrives_changed_is_refused(tmp_path: Path) -> None:
    bundle = pack_code(_bench(tmp_path / "bench") / "repo")
    with pytest.raises(ShippingError, match="arrived as sha256:"):
        unpacked("code", bundle.sha256, lambda: bundle.data + b"x", tmp_path / "cache")
    assert not (tmp_path / "cache" / "code" / bundle.sha256.removeprefix("sha256:")).exists()


def test_the_agents_own_code_is_shipped_as_its_sandbox_would_show_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    agents = project / "agents"
    agents.mkdir(parents=True)
    (agents / "mine.py").write_text("print(1)\n", encoding="utf-8")
    (project / "loose.py").write_text("print(2)\n", encoding="utf-8")
    venv_python = tmp_path / "venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text("#!/bin/sh\n", encoding="utf-8")
    venv_python.chmod(0o755)
    named = [
        agents / "mine.py",  # its own directory: shipped whole
        project / "loose.py",  # in the project directory, which is never shipped whole
        venv_python,  # an interpreter: installed on every node, never shipped
        Path(sys.executable).resolve(),
        Path("/usr/bin/env"),
        tmp_path / "missing.py",
    ]
    assert code_to_ship(named, walls=[project]) == [agents, project / "loose.py"]
    assert code_to_ship([agents, agents / "mine.py"], walls=[]) == [agents]


def test_paths_are_rewritten_where_they_stand_whole() -> None:
    moves = {"/work/agents": "/cache/code/ab/agents", "/work/a.py": "/cache/code/cd/a.py"}
    command = "cd /work/agents && python3 /work/agents/run.py --x=/work/a.py /work/agents2/y"
    assert relocated(command, moves) == (
        "cd /cache/code/ab/agents && python3 /cache/code/ab/agents/run.py "
        "--x=/cache/code/cd/a.py /work/agents2/y"
    )
    assert relocated("'/work/a.py'", moves) == "'/cache/code/cd/a.py'"
    config = {"kind": "command", "command": "python3 /work/a.py", "readable": ["/work/agents/d"]}
    assert relocated_agent_config(config, moves) == {
        "kind": "command",
        "command": "python3 /cache/code/cd/a.py",
        "readable": ["/cache/code/ab/agents/d"],
    }
    openai = {"kind": "openai", "model": "/work/a.py"}
    assert relocated_agent_config(openai, moves) == openai
