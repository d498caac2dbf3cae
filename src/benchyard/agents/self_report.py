"""What a command agent reports about itself (docs/agent-protocol.md#trajectory-events): the lines
of its trajectory file, each an event of benchyard's shape or a step of Harbor's Agent Trajectory
Interchange Format (ATIF), read as claims. Every field is checked (a wrong type or an unbelievable
number is dropped with a note), a claimed tool call is kept apart from the calls benchyard
observes (it never has a `call_id`, which the tool checks count), and a model call's claimed
tokens are priced with the run's `prices` by the model it names."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from benchyard.providers.config import ModelPrice
from benchyard.runner.trajectory import Event, claim_numbers
from benchyard.untrusted import UntrustedFileRefused, read_capped

TRAJECTORY_READ_CAP = 8 * 1024 * 1024
NAME_CHARS = 200  # a model's or a tool's name
MAX_CLAIMED_SECONDS = 86_400.0  # a model call's latency or time to first token
EARLIEST_TS, LATEST_TS = 946_684_800.0, 4_102_444_800.0  # 2000-01-01 to 2100-01-01 (Unix)
ATIF_ROLES = {"agent": "assistant", "user": "user", "system": "system"}


def read_agent_events(
    path: Path, offset: int, into: list[Event], prices: Mapping[str, ModelPrice]
) -> int:
    """Append the events the agent wrote since `offset`; malformed lines become error events."""
    try:
        data = read_capped(path, TRAJECTORY_READ_CAP, offset=offset)
    except UntrustedFileRefused as refused:
        into.append(Event(kind="error", content=f"trajectory file ignored: {refused.strerror}"))
        return offset
    except OSError:
        return offset
    for number, line in enumerate(data.splitlines(), start=1):
        if line.strip():
            into.extend(parse_line(line, number, prices))
    return offset + len(data)


def parse_line(line: bytes, number: int, prices: Mapping[str, ModelPrice]) -> list[Event]:
    """The events a trajectory line claims, each claim that cannot be believed dropped with a note
    after them."""
    notes: list[str] = []
    try:
        raw = json.loads(line)
        if not isinstance(raw, dict):
            raise ValueError("expected an object")
        events = _atif_step(raw, notes) if "step_id" in raw else [_event(raw, notes)]
    except (ValueError, RecursionError) as error:
        excerpt = line[:120].decode("utf-8", errors="replace")
        return [
            Event(kind="error", content=f"unreadable trajectory line {number}: {error}: {excerpt}")
        ]
    for event in events:
        _price(event, prices)
    notes_events = [Event(kind="error", content=f"trajectory line {number}: {n}") for n in notes]
    return [*events, *notes_events]


def model_calls(trajectory: list[Event]) -> int:
    """The model calls an agent reported: its assistant messages (never its tool calls or logs)."""
    return sum(1 for event in trajectory if _is_model_call(event))


def _is_model_call(event: Event) -> bool:
    source = (event.data or {}).get("source")
    return event.kind == "message" and event.role == "assistant" and source == "agent"


# --- benchyard's own shape -----------------------------------------------------------------------


def _event(raw: dict[str, Any], notes: list[str]) -> Event:
    content = raw.get("content", "")
    if not isinstance(content, str):
        raise ValueError("expected an object with a text 'content'")
    event = Event(
        kind=str(raw.get("kind", "log")),
        role=_string(raw, "role", notes),
        content=content,
        reasoning=_string(raw, "reasoning", notes, cap=None),
        data={"source": "agent"},
    )
    _timestamp(event, raw.get("ts"), notes)
    notes += claim_numbers(event, raw)
    _seconds(event, raw, notes)
    _claimed_model(event, _string(raw, "model", notes, cap=NAME_CHARS))
    tool = _string(raw, "tool", notes, cap=NAME_CHARS)
    call_id = _string(raw, "call_id", notes, cap=NAME_CHARS)
    if tool is not None or call_id is not None:
        _claimed_call(event, tool, raw.get("arguments"), call_id)
    return event


def _string(raw: dict[str, Any], name: str, notes: list[str], cap: int | None = None) -> str | None:
    value = raw.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        notes.append(f"{name} dropped: not a string")
        return None
    if cap is not None and len(value) > cap:
        notes.append(f"{name} dropped: over {cap} characters")
        return None
    return value


def _timestamp(event: Event, value: Any, notes: list[str]) -> None:
    """`ts`: Unix seconds, or an ISO 8601 time (ATIF's `timestamp`), from 2000 to 2100; else the
    time benchyard read the line."""
    if value is None:
        return
    seconds: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and len(value) <= 64:
        try:
            seconds = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            seconds = None
    if seconds is not None and math.isfinite(seconds) and EARLIEST_TS <= seconds <= LATEST_TS:
        event.ts = seconds
    else:
        notes.append(f"ts {str(value)[:40]!r} dropped: not a time from 2000 to 2100")


def _seconds(event: Event, raw: dict[str, Any], notes: list[str]) -> None:
    for name in ("latency_sec", "ttft_sec"):
        value = raw.get(name)
        if value is None:
            continue
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and 0 <= value <= MAX_CLAIMED_SECONDS:  # NaN compares false
            setattr(event, name, float(value))
        else:
            notes.append(f"{name} {str(value)[:40]} dropped: not seconds from 0 to 86,400")


def _claimed_model(event: Event, model: str | None) -> None:
    if model is not None and event.data is not None:
        event.data["model"] = model


def _claimed_call(event: Event, tool: str | None, arguments: Any, call_id: str | None) -> None:
    """A tool call (or its result) the agent says it made: its name, arguments and id, kept
    under `agent_call_id` so that no tool check counts it as observed."""
    assert event.data is not None
    if tool is not None:
        event.data["tool"] = tool
    if call_id is not None:
        event.data["agent_call_id"] = call_id
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):  # not JSON: kept as the text it is
            arguments = json.loads(arguments)
    if arguments is not None:
        event.data["arguments"] = arguments


# --- ATIF steps ----------------------------------------------------------------------------------


def _atif_step(raw: dict[str, Any], notes: list[str]) -> list[Event]:
    """An ATIF step: its message (an agent step is one model call, with its tool calls and
    metrics), then each tool call's observed result."""
    role = ATIF_ROLES.get(str(raw.get("source")))
    message = raw.get("message", "")
    if role is None or not isinstance(message, str):
        raise ValueError("an ATIF step needs a source (agent, user, system) and a text message")
    metrics: dict[str, Any] = _object(raw.get("metrics"))
    claimed = {
        "kind": "message",
        "role": role,
        "content": message,
        "ts": raw.get("timestamp"),
        "reasoning": raw.get("reasoning_content"),
        "model": raw.get("model_name"),
        "tokens_in": metrics.get("prompt_tokens"),
        "tokens_out": metrics.get("completion_tokens"),
        "cost_usd": metrics.get("cost_usd"),
    }
    event = _event(claimed, notes)
    calls = [call for call in raw.get("tool_calls") or [] if isinstance(call, dict)]
    if calls and event.data is not None:
        event.data["tool_calls"] = [_atif_call(call, notes) for call in calls]
    results = _object(raw.get("observation")).get("results")
    return [event, *_atif_results(results, notes)]


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _atif_call(call: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    name = _string(call, "function_name", notes, cap=NAME_CHARS) or ""
    call_id = _string(call, "tool_call_id", notes, cap=NAME_CHARS) or ""
    arguments = call.get("arguments")
    text = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
    return {"id": call_id, "name": name, "arguments": text}


def _atif_results(results: Any, notes: list[str]) -> list[Event]:
    events = []
    for result in results if isinstance(results, list) else []:
        if not isinstance(result, dict):
            continue
        content = result.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        event = Event(kind="tool_result", role="tool", content=text, data={"source": "agent"})
        call_id = _string(result, "source_call_id", notes, cap=NAME_CHARS)
        if call_id is not None:
            _claimed_call(event, None, None, call_id)
        events.append(event)
    return events


# --- prices --------------------------------------------------------------------------------------


def _price(event: Event, prices: Mapping[str, ModelPrice]) -> None:
    """A model call's cost from its claimed tokens and the price of the model it names; a cost
    the agent claimed beside it is kept as `claimed_cost_usd`."""
    data = event.data or {}
    price = prices.get(str(data.get("model"))) if _is_model_call(event) else None
    cost = price.cost_usd(event.tokens_in, event.tokens_out) if price else None
    if cost is None:
        return
    if event.cost_usd is not None and event.cost_usd != cost:
        data["claimed_cost_usd"] = event.cost_usd
    event.cost_usd = cost
