"""What a scenario asks of its sandbox, and what a sandbox is given: merged limits, the agent's
named files, the allow-list of host paths, the system view, the per-process limits."""

from __future__ import annotations

import resource
from pathlib import Path

from benchyard.agents.command import named_paths
from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.isolation import request_for
from benchyard.sandbox.allowlist import host_paths
from benchyard.sandbox.hostview import system_view_args
from benchyard.sandbox.limits import ResourceLimits, SandboxRequest, process_rlimits
from tests.support import scenario, write_benchmark


def test_a_scenario_s_keys_win_over_its_benchmark_s_over_the_defaults(tmp_path: Path) -> None:
    root = write_benchmark(
        tmp_path / "bench",
        [
            scenario("plain", "x"),
            scenario(
                "own",
                "x",
                limits={"max_processes": 64, "cpu_sec": 2.5},
                sandbox={"image": "mine:1", "network": True},
            ),
        ],
        defaults={"memory_mb": 512},
    )
    manifest = root / "benchmark.yaml"
    manifest.write_text(manifest.read_text() + "sandbox: {image: team:2}\n", encoding="utf-8")
    benchmark = load_benchmark(root)
    plain, own = benchmark.scenarios
    assert request_for(benchmark, plain) == SandboxRequest(
        image="team:2", network=False, limits=ResourceLimits(memory_mb=512)
    )
    assert request_for(benchmark, own) == SandboxRequest(
        image="mine:1",
        network=True,
        limits=ResourceLimits(memory_mb=512, max_processes=64, cpu_sec=2.5),
    )
    assert request_for(benchmark, plain, network=True).network


def test_the_files_a_command_names_are_found(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text("print(1)\n", encoding="utf-8")
    command = f"if [ -n \"$X\" ]; then python3 {script} --flag; else cat '{tmp_path}'/none; fi"
    assert named_paths(command) == (script,)
    assert named_paths("python3 'unbalanced") == ()


def test_the_allow_list_shows_the_agent_s_code_and_never_a_sealed_path(tmp_path: Path) -> None:
    project = tmp_path / "project"
    agents, bench, store = project / "agents", project / "bench", project / ".benchyard"
    for directory in (agents, bench, store):
        directory.mkdir(parents=True)
    in_agents, at_root, in_bench = agents / "a.py", project / "agent.py", bench / "answer.py"
    for path in (in_agents, at_root, in_bench):
        path.write_text("print(1)\n", encoding="utf-8")
    shown = host_paths([in_agents, at_root, in_bench], [], [bench, store], [project]).readable
    # the script's directory; at the project's root only the file; nothing of the benchmark
    assert set(shown) == {agents, at_root}


def test_an_interpreter_brings_its_installation_and_declared_paths_are_shown(
    tmp_path: Path,
) -> None:
    venv = tmp_path / "tools" / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text("#!/bin/sh\n", encoding="utf-8")
    python.chmod(0o755)
    data = tmp_path / "data"
    data.mkdir()
    found = host_paths([python], [data], [tmp_path / "bench"], [])
    assert venv in found.readable and venv / "bin" in found.readable
    assert data in found.readable


def test_a_sealed_path_inside_a_shown_one_is_covered(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "bench").mkdir(parents=True)
    found = host_paths([], [shared], [shared / "bench"], [])
    assert found.covered() == (shared / "bench",)


def test_the_system_view_is_an_allow_list() -> None:
    args = system_view_args()
    bound = {args[i + 1] for i, word in enumerate(args) if word in ("--ro-bind", "--ro-bind-try")}
    made = {args[i + 1] for i, word in enumerate(args) if word in ("--dir", "--symlink")}
    assert "/usr" in bound and "/etc" in bound
    for never in ("/home", "/root", "/srv", "/run", "/var", "/opt", "/mnt", "/tmp", "/work"):
        assert never not in bound and not any(path.startswith(never + "/") for path in bound)
    assert "/var" in made  # private, with links to the private /tmp and /run
    assert ("--symlink", "../tmp", "/var/tmp") in zip(args, args[1:], args[2:], strict=False)
    assert len(bound) < 30


def test_process_limits() -> None:
    limits = ResourceLimits(memory_mb=100, max_processes=7, cpu_sec=1.2)
    assert process_rlimits(limits, address_space=True, process_count=True) == [
        (resource.RLIMIT_CPU, 2),
        (resource.RLIMIT_AS, 100 * 1024 * 1024),
        (resource.RLIMIT_NPROC, 7),
    ]
    # with a cgroup: RLIMIT_NPROC would count the sandbox user's processes in every sandbox
    assert process_rlimits(ResourceLimits(), address_space=False, process_count=False) == []
