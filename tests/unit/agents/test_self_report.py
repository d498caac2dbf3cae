"""A command agent's trajectory lines read as claims (agents/self_report.py): the fields kept,
the ones dropped with a note, ATIF steps, and the model calls that count as turns."""

from __future__ import annotations

import json
from typing import Any

from benchyard.agents.self_report import model_calls, parse_line
from benchyard.providers.config import ModelPrice

PRICES = {"m": ModelPrice(input_per_mtok=3.0, output_per_mtok=15.0)}


def parse(raw: Any) -> list[Any]:
    return parse_line(json.dumps(raw).encode(), 7, PRICES)


def test_unbelievable_fields_are_dropped_each_with_a_note() -> None:
    event, *notes = parse(
        {
            "kind": "message",
            "role": "assistant",
            "content": "hi",
            "ts": "yesterday",
            "latency_sec": 1e9,
            "model": ["not", "a", "string"],
            "tool": "x" * 201,
        }
    )
    assert event.latency_sec is None and event.data == {"source": "agent"}
    assert [note.content for note in notes] == [
        "trajectory line 7: ts 'yesterday' dropped: not a time from 2000 to 2100",
        "trajectory line 7: latency_sec 1000000000.0 dropped: not seconds from 0 to 86,400",
        "trajectory line 7: model dropped: not a string",
        "trajectory line 7: tool dropped: over 200 characters",
    ]


def test_tokens_are_priced_by_the_model_named() -> None:
    (priced,) = parse({"kind": "message", "role": "assistant", "model": "m", "tokens_in": 1000})
    assert priced.cost_usd == 0.003
    (unknown,) = parse({"kind": "message", "role": "assistant", "model": "n", "tokens_in": 1000})
    assert unknown.cost_usd is None  # unknown, never $0
    (log,) = parse({"kind": "log", "model": "m", "tokens_in": 1000, "content": "not a call"})
    assert log.cost_usd is None


def test_an_atif_step_is_a_model_call_with_its_tool_calls_and_results() -> None:
    step = {
        "step_id": 2,
        "source": "agent",
        "message": "checking",
        "reasoning_content": "the file first",
        "model_name": "m",
        "metrics": {"prompt_tokens": 100, "completion_tokens": 10, "cost_usd": 1.0},
        "tool_calls": [{"tool_call_id": "t1", "function_name": "cat", "arguments": {"f": "a"}}],
        "observation": {"results": [{"source_call_id": "t1", "content": "A"}, "junk"]},
    }
    message, result = parse(step)
    assert (message.role, message.content, message.reasoning) == (
        "assistant",
        "checking",
        "the file first",
    )
    assert (message.tokens_in, message.tokens_out) == (100, 10)
    assert message.cost_usd == 0.00045 and message.data["claimed_cost_usd"] == 1.0
    assert message.data["tool_calls"] == [{"id": "t1", "name": "cat", "arguments": '{"f": "a"}'}]
    assert (result.kind, result.content, result.data["agent_call_id"]) == ("tool_result", "A", "t1")
    user = parse({"step_id": 1, "source": "user", "message": "fix it"})
    assert model_calls([*user, message, result]) == 1
    (bad,) = parse({"step_id": 3, "source": "robot", "message": "?"})
    assert bad.kind == "error" and "an ATIF step needs a source" in bad.content
