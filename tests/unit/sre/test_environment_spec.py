"""A scenario's `environment:`: its tools join the ToolBox, and a bad one is reported with its
file, line and field when the benchmark loads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchyard.agents.toolbox import ToolBox
from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.tool_events import observed_calls
from benchyard.spec.problems import BenchmarkInvalid
from tests.support import write_benchmark

ENVIRONMENT = {
    "type": "sre",
    "app": "bookinfo",
    "seed": 4,
    "faults": [
        {
            "mechanism": "service-selector",
            "target": {"kind": "Service", "name": "details", "namespace": "book-info"},
        }
    ],
}


def scenario(environment: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "id": "inc",
        "stimulus": {"task": "find it"},
        "environment": environment,
        "checks": [{"type": "root_cause", "entities": []}],
        **extra,
    }


def test_environment_tools_join_the_toolbox(tmp_path: Path) -> None:
    weather = {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {}},
        "result": "sunny",
    }
    loaded = load_benchmark(
        write_benchmark(tmp_path / "b", [scenario(ENVIRONMENT, tools=[weather])])
    )
    sink: list[Any] = []
    box = ToolBox.for_scenario(loaded.scenarios[0], sink)
    names = [d["function"]["name"] for d in box.definitions()]
    assert names[0] == "get_weather" and "list_alerts" in names and "get_traces" in names
    endpoints = box.call("get_objects", {"kind": "Endpoints"})
    assert not endpoints.error and '"details"' in endpoints.text
    bad = box.call("get_metrics", '{"service": "details"}')
    assert bad.error and "'metric' is a required property" in bad.text
    assert [c.name for c in observed_calls(sink)] == ["get_objects", "get_metrics"]


def test_a_reference_may_replay_environment_tools(tmp_path: Path) -> None:
    reference = {"answer": '{"root_causes": []}', "tool_calls": [{"name": "list_alerts"}]}
    loaded = load_benchmark(
        write_benchmark(tmp_path / "b", [scenario(ENVIRONMENT, reference=reference)])
    )
    assert loaded.scenarios[0].reference is not None


@pytest.mark.parametrize(
    ("environment", "field", "message"),
    [
        (
            {**ENVIRONMENT, "type": "sre2"},
            "environment.type",
            "unknown environment type 'sre2' (did you mean 'sre'?)",
        ),
        ({**ENVIRONMENT, "app": "bank"}, "environment.app", "unknown app 'bank'"),
        ({**ENVIRONMENT, "sed": 4}, "environment.sed", "unknown field"),
        (
            {
                **ENVIRONMENT,
                "faults": [{"mechanism": "meteor", "target": {"kind": "Node", "name": "n"}}],
            },
            "environment.faults[0].mechanism",
            "expected",
        ),
        (
            {
                **ENVIRONMENT,
                "faults": [
                    {
                        "mechanism": "bad-image",
                        "target": {"kind": "Deployment", "name": "cart", "namespace": "book-info"},
                    }
                ],
            },
            "environment",
            "cannot simulate this incident: bad-image: no Deployment 'cart' in bookinfo",
        ),
    ],
)
def test_bad_environments_name_file_line_and_field(
    tmp_path: Path, environment: dict[str, Any], field: str, message: str
) -> None:
    root = write_benchmark(tmp_path / "b", [scenario(environment)])
    with pytest.raises(BenchmarkInvalid) as caught:
        load_benchmark(root)
    shown = [str(p) for p in caught.value.problems]
    assert any(
        p.startswith("scenarios/main.yaml:") and f": {field}: " in p and message in p for p in shown
    ), shown
