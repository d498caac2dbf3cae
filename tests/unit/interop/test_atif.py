"""ATIF export of trajectories built here: the tool calls a model asked for, those benchyard
served (each once, however they are recorded) and those an agent reported; the agent's version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from benchyard import __version__
from benchyard.agents.self_report import parse_line
from benchyard.interop.atif import trajectory
from benchyard.interop.source import RunSource
from benchyard.runner.tool_events import call_event, result_event
from benchyard.runner.trajectory import Event, message
from tests.support import attempt_record, run_record

SCHEMA = json.loads(
    (Path(__file__).parents[2] / "fixtures" / "schemas" / "atif-v1.4.schema.json").read_text()
)
ASKED = [{"id": "call_0", "name": "get_weather", "arguments": '{"city": "Paris"}'}]


def exported(events: list[Event], answer: str = "18 C", **run: Any) -> dict[str, Any]:
    attempt = attempt_record("r" * 16, "t" * 16, "s", trajectory=events, answer=answer)
    document = trajectory(RunSource(run_record("r" * 16, **run), [attempt], {}), attempt)
    jsonschema.validate(document, SCHEMA)
    return document


def test_a_served_call_is_the_models_own_call_not_a_second_one() -> None:
    """The openai agent records the call its model asked for (id call_0) and the call benchyard's
    tool box served (its own id call-1): one call in ATIF, its result tied to call_0."""
    asked = message("assistant", "", tokens_in=9, data={"source": "model", "model": "gpt-x"})
    assert asked.data is not None
    asked.data["tool_calls"] = ASKED
    events = [
        message("user", "weather in Paris?"),
        asked,
        call_event("get_weather", {"city": "Paris"}, "call-1", 1),
        result_event("get_weather", '{"temp_c": 18}', "call-1", error=False),
        message("assistant", "18 C", data={"source": "model", "model": "gpt-x"}),
    ]
    steps = exported(events)["steps"]
    assert [step["source"] for step in steps] == ["user", "agent", "agent"]
    assert steps[1]["model_name"] == "gpt-x" and steps[1]["metrics"] == {"prompt_tokens": 9}
    assert steps[1]["tool_calls"] == [
        {"tool_call_id": "call_0", "function_name": "get_weather", "arguments": {"city": "Paris"}}
    ]
    assert steps[1]["observation"]["results"] == [
        {"source_call_id": "call_0", "content": '{"temp_c": 18}'}
    ]


def test_a_calls_time_to_first_token_and_latency_are_in_its_metrics_extra() -> None:
    """ATIF has no field for a call's TTFT or latency: they go in its metrics' `extra` (they were
    dropped), beside its tokens and cost."""
    call = message("assistant", "done", tokens_in=12, tokens_out=3, data={"source": "model"})
    call.cost_usd, call.ttft_sec, call.latency_sec = 0.0004, 0.21, 1.3
    steps = exported([message("user", "go"), call], answer="done")["steps"]
    assert steps[1]["metrics"] == {
        "prompt_tokens": 12,
        "completion_tokens": 3,
        "cost_usd": 0.0004,
        "extra": {"ttft_sec": 0.21, "latency_sec": 1.3},
    }


def test_calls_the_agent_ran_itself_are_kept() -> None:
    """A model bridge records the calls the model asked for, which the agent ran itself; an agent
    reports its own in its trajectory file: both are in the export (they were dropped)."""
    asked = message("assistant", "", data={"source": "bridge", "model": "gpt-x"})
    assert asked.data is not None
    asked.data["tool_calls"] = ASKED
    lines = [
        {"kind": "tool_call", "content": "ls", "tool": "shell", "arguments": {"cmd": "ls"}},
        {"kind": "tool_result", "content": "a.txt", "call_id": "c9"},
    ]
    lines[0]["call_id"] = "c9"
    reported = [event for line in lines for event in parse_line(json.dumps(line).encode(), 1, {})]
    steps = exported([message("user", "go"), asked, *reported])["steps"]
    calls = [call for step in steps for call in step.get("tool_calls", [])]
    assert [(call["tool_call_id"], call["function_name"]) for call in calls] == [
        ("call_0", "get_weather"),
        ("c9", "shell"),
    ]
    results = [r for step in steps for r in step.get("observation", {}).get("results", [])]
    assert results == [{"source_call_id": "c9", "content": "a.txt"}]


def test_the_agents_version_is_known_where_it_can_be() -> None:
    def version(**run: Any) -> str:
        return str(exported([message("user", "hi")], **run)["agent"]["version"])

    assert version(agent_commit="abc123", agent_dirty=True) == "abc123+dirty"
    assert version(agent_config={"kind": "command", "version": "2.4.6"}) == "2.4.6"
    assert version(agent_config={"kind": "openai", "model": "m"}) == f"benchyard {__version__}"
    assert version(agent_config={"kind": "command"}) == "unknown"
    bridged = {"kind": "command", "bridge": {"model": "gpt-x"}}
    document = exported([message("user", "hi")], agent_config=bridged, agent_name="mine")
    assert document["agent"]["name"] == "mine" and document["agent"]["model_name"] == "gpt-x"
