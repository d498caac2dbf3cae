"""Tool calls in a trajectory: the events benchyard records when it answers a scenario tool, and
reading them back for the tool checks.

Only calls that benchyard answered itself carry `data.tool`; events a command agent wrote about its
own tools are kept for reading but never counted as observed calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from benchyard.runner.trajectory import Event


@dataclass(frozen=True)
class ObservedCall:
    name: str
    arguments: dict[str, Any]
    error: bool  # the tool answered with an error
    turn: int


def call_event(
    name: str,
    arguments: dict[str, Any],
    call_id: str,
    turn: int,
    arguments_error: str | None = None,
) -> Event:
    """A call benchyard answered; `arguments_error` says why the arguments the agent wrote could
    not be read (not JSON, not an object), `arguments` then being {}."""
    shown = json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    data: dict[str, Any] = {"tool": name, "arguments": arguments, "call_id": call_id, "turn": turn}
    if arguments_error is not None:
        data["arguments_error"] = arguments_error
    return Event(kind="tool_call", role="assistant", content=f"{name}({shown})", data=data)


def result_event(name: str, text: str, call_id: str, *, error: bool) -> Event:
    return Event(
        kind="tool_result",
        role="tool",
        content=text,
        data={"tool": name, "call_id": call_id, "error": error},
    )


def observed_calls(events: list[Event]) -> list[ObservedCall]:
    """The tool calls benchyard answered, in order, each with whether its result was an error."""
    calls: dict[str, ObservedCall] = {}
    for event in events:
        data = event.data or {}
        if "tool" not in data or "call_id" not in data:
            continue
        call_id = str(data["call_id"])
        if event.kind == "tool_call":
            arguments = data.get("arguments")
            calls[call_id] = ObservedCall(
                name=str(data["tool"]),
                arguments=arguments if isinstance(arguments, dict) else {},
                error=False,
                turn=int(data.get("turn", 1)),
            )
        elif event.kind == "tool_result" and data.get("error") and call_id in calls:
            found = calls[call_id]
            calls[call_id] = ObservedCall(found.name, found.arguments, True, found.turn)
    return list(calls.values())
