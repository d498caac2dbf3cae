"""Transcript events of attempts built here, as Inspect's own reader reads them back: how an
attempt ended (an error not the agent's fault, a timeout), a reply's reasoning, and tool calls
whose arguments could not be read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.event import ErrorEvent, InfoEvent, ModelEvent, SampleLimitEvent, ToolEvent
from inspect_ai.log import EvalSample, read_eval_log
from inspect_ai.model import ContentReasoning

from benchyard.interop.inspect_log import write_eval_log
from benchyard.interop.source import RunSource
from benchyard.runner.tool_events import call_event, result_event
from benchyard.runner.trajectory import Event, message
from benchyard.spec.models import Scenario
from tests.support import attempt_record, run_record


def read_back(
    tmp_path: Path,
    events: list[Event],
    scenarios: dict[str, Scenario] | None = None,
    **attempt: Any,
) -> EvalSample:
    record = attempt_record("r" * 16, "t" * 16, "s", trajectory=events, **attempt)
    source = RunSource(run_record("r" * 16), [record], scenarios or {})
    path = write_eval_log(source, tmp_path / "log.json")
    log = read_eval_log(str(path))
    assert log.samples is not None
    return log.samples[0]


def test_an_error_that_is_not_the_agents_fault_is_an_error_event(tmp_path: Path) -> None:
    failed = Event(kind="error", content="provider 503", data={"kind": "provider_unavailable"})
    sample = read_back(
        tmp_path, [message("user", "hi"), failed], verdict="error", cause="provider 503"
    )
    [info] = [e for e in sample.events if isinstance(e, InfoEvent)]
    assert info.source == "benchyard"
    assert info.data == {
        "kind": "error",
        "message": "provider 503",
        "data": {"kind": "provider_unavailable"},
    }
    [error] = [e for e in sample.events if isinstance(e, ErrorEvent)]
    assert error.error.message == "provider 503"
    assert sample.scores is None


def test_a_timeout_is_a_time_limit_event(tmp_path: Path) -> None:
    sample = read_back(tmp_path, [message("user", "hi")], verdict="timeout", cause="no answer")
    [limit] = [e for e in sample.events if isinstance(e, SampleLimitEvent)]
    assert (limit.type, limit.message) == ("time", "no answer")


def test_reasoning_and_unreadable_arguments_are_kept(tmp_path: Path) -> None:
    asked = message(
        "assistant",
        "",
        reasoning="think <b>",
        data={
            "source": "model",
            "model": "m",
            "finish_reason": "length",
            "tool_calls": [{"id": "k1", "name": "f", "arguments": "{not json"}],
        },
    )
    served = call_event("f", {}, "call-1", 1, arguments_error="not JSON")
    events = [message("user", "hi"), asked, served, result_event("f", "bad", "call-1", error=True)]
    sample = read_back(tmp_path, events)
    [model] = [e for e in sample.events if isinstance(e, ModelEvent)]
    reasoning = model.output.message.content[0]
    assert isinstance(reasoning, ContentReasoning) and reasoning.reasoning == "think <b>"
    assert model.output.stop_reason == "max_tokens"
    [call] = model.output.message.tool_calls or []
    assert call.parse_error is not None and "{not json" in call.parse_error
    [tool] = [e for e in sample.events if isinstance(e, ToolEvent)]
    assert tool.id == "k1" and tool.error is not None and tool.error.message == "bad"
    assert [m.role for m in sample.messages] == ["user", "assistant", "tool"]


def test_a_tool_schema_inspect_cannot_read_is_offered_as_far_as_it_can(tmp_path: Path) -> None:
    """Valid JSON Schema that Inspect's own model refuses (boolean schemas): the log stays
    readable, the tool offered with what Inspect reads of it."""
    parameters = {
        "type": "object",
        "properties": {
            "anything": True,
            "pair": {"type": "array", "prefixItems": [{"type": "string"}], "items": True},
            "size": {"type": ["integer", "null"], "minimum": 1},
        },
        "required": ["pair"],
        "additionalProperties": False,
    }
    scenario = Scenario.model_validate(
        {
            "id": "s",
            "stimulus": "hi",
            "tools": [{"name": "f", "parameters": parameters, "result": "ok"}],
            "checks": [{"type": "contains", "value": "ok"}],
        }
    )
    called = message("assistant", "ok", data={"source": "model", "model": "m"})
    sample = read_back(tmp_path, [message("user", "hi"), called], {"s": scenario})
    [model] = [e for e in sample.events if isinstance(e, ModelEvent)]
    [offered] = model.tools
    properties = offered.parameters.properties
    assert set(properties) == {"anything", "pair", "size"}
    assert properties["pair"].type == "array" and properties["pair"].items is None
    assert properties["size"].type == ["integer", "null"] and properties["size"].minimum == 1
    assert offered.parameters.required == ["pair"]
