"""What a scenario asks of its sandbox, and what a sandbox is given: merged limits, the agent's
named files, the variables a container gets, the host view, the shell limits."""

from __future__ import annotations

import itertools
from pathlib import Path

from benchyard.agents.command import named_paths
from benchyard.runner.isolation import request_for
from benchyard.sandbox.docker import passed_variables
from benchyard.sandbox.hostview import host_view_args
from benchyard.sandbox.limits import ResourceLimits, SandboxRequest, ulimit_lines
from benchyard.spec.loader import load_benchmark
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


def test_a_container_gets_only_what_benchyard_or_the_agent_set(monkeypatch) -> None:
    monkeypatch.setenv("HOST_ONLY", "secret")
    monkeypatch.setenv("CHANGED", "before")
    env = {"HOST_ONLY": "secret", "CHANGED": "after", "BENCHYARD_TURN": "1", "NEW": "x"}
    assert passed_variables(env) == ["BENCHYARD_TURN", "CHANGED", "NEW"]


def test_the_host_view_keeps_var_private_and_binds_few_mounts() -> None:
    args = host_view_args()
    binds = [args[i + 1] for i, word in enumerate(args) if word == "--ro-bind-try"]
    assert "/usr" in binds and "/etc" in binds
    assert not [path for path in binds if path == "/var" or path.startswith(("/var/", "/proc"))]
    assert ("--dir", "/var") in itertools.pairwise(args)
    assert ("--symlink", "../tmp", "/var/tmp") in zip(args, args[1:], args[2:], strict=False)
    assert len(binds) < 30


def test_shell_limits() -> None:
    limits = ResourceLimits(memory_mb=100, max_processes=7, cpu_sec=1.2)
    assert ulimit_lines(limits, address_space=True) == [
        "ulimit -t 2",
        "ulimit -v 102400",
        "ulimit -u 7 2>/dev/null || ulimit -p 7",
    ]
    assert ulimit_lines(ResourceLimits(), address_space=False) == [
        "ulimit -u 512 2>/dev/null || ulimit -p 512"
    ]
