"""Choosing an executor: built-ins imported only when chosen, clear errors otherwise."""

from __future__ import annotations

import sys

import pytest

from benchyard.executors import ExecutorUnavailable, build_executor, executor_names
from benchyard.executors.ray.driver import named_variables


def test_executors_are_chosen_by_name() -> None:
    assert {"local", "ray"} <= set(executor_names())
    local = build_executor("local")
    assert local.name == "local" and local.lanes(None) == 8 and local.lanes(3) == 3
    with pytest.raises(ExecutorUnavailable, match=r"unknown executor 'slurm' \(known: local, ray"):
        build_executor("slurm")


def test_the_ray_executor_says_how_to_install_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed
    with pytest.raises(ExecutorUnavailable, match=r"pip install 'benchyard\[ray\]'"):
        build_executor("ray")


def test_the_variables_an_agent_and_its_judge_name_travel_with_their_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_KEY", "k1")
    monkeypatch.setenv("ORG_HEADER", "h1")
    monkeypatch.setenv("JUDGE_KEY", "j1")
    monkeypatch.delenv("UNSET_ONE", raising=False)
    agent = {
        "kind": "openai",
        "provider": {"api_key_env": "MY_KEY", "headers_env": {"X-Org": "ORG_HEADER"}},
        "pass_env": ["UNSET_ONE"],
    }
    judge = {"provider": {"api_key_env": "JUDGE_KEY"}}
    assert named_variables(agent, judge) == {
        "JUDGE_KEY": "j1",
        "MY_KEY": "k1",
        "ORG_HEADER": "h1",
    }
    assert named_variables({"kind": "command", "command": "echo"}, None) == {}
