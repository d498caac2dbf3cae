"""Trajectory events: the timestamped record of what happened in an attempt."""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchyard.store.outputs import compress, prefix_of

EventKind = str  # "message" | "tool_call" | "tool_result" | "error" | "log"

MAX_CLAIMED_TOKENS = 100_000_000
"""The most tokens one event may claim (in or out): more than any model's context."""
MAX_CLAIMED_COST_USD = 10_000.0
"""The most one event may claim to have cost."""
CLAIMED_BOUNDS: dict[str, tuple[bool, float]] = {
    "tokens_in": (True, MAX_CLAIMED_TOKENS),
    "tokens_out": (True, MAX_CLAIMED_TOKENS),
    "cost_usd": (False, MAX_CLAIMED_COST_USD),
}
"""The numbers an agent may report about itself (docs/agent-protocol.md): whether each is a whole
number, and its bound."""


@dataclass
class Event:
    kind: EventKind
    content: str = ""
    role: str | None = None
    ts: float = field(default_factory=time.time)
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    reasoning: str | None = None  # a model's reasoning text, where the endpoint returns it
    latency_sec: float | None = None  # a model call: request sent to reply complete
    ttft_sec: float | None = None  # a streamed model call: request sent to the first token
    data: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        # vars(), not asdict(): asdict deep-copies every field, and this runs for every event stored
        return {key: value for key, value in vars(self).items() if value is not None}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Event:
        known = {name: raw[name] for name in cls.__dataclass_fields__ if name in raw}
        return cls(**known)


def claim_numbers(event: Event, raw: dict[str, Any]) -> list[str]:
    """Set on `event` the numbers an agent reports in a trajectory line (tokens, cost) that can
    be believed: finite, not negative, whole where counted and within CLAIMED_BOUNDS.
    A note for each one dropped, so a claimed cost of 1e999999 never makes a run's cost
    infinite."""
    dropped: list[str] = []
    for name, (whole, bound) in CLAIMED_BOUNDS.items():
        value = raw.get(name)
        if value is None:
            continue
        if _believable(value, whole, bound):
            setattr(event, name, int(value) if whole else float(value))
        else:
            kind = "a whole number" if whole else "a number"
            shown = str(value)[:40] if isinstance(value, int) else repr(value)[:40]
            dropped.append(f"{name} {shown} dropped: not {kind} from 0 to {bound:,.0f}")
    return dropped


def believable_count(value: Any) -> int | None:
    """A token count reported by someone else (an agent, a provider's usage), or None when it is
    not a whole number from 0 to MAX_CLAIMED_TOKENS."""
    return int(value) if _believable(value, True, MAX_CLAIMED_TOKENS) else None


def _believable(value: Any, whole: bool, bound: float) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if whole and not isinstance(value, int):
        return False
    return 0 <= value <= bound  # NaN compares false, infinities exceed the bound


def message(role: str, content: str, **extra: Any) -> Event:
    return Event(kind="message", role=role, content=content, **extra)


def encode(events: list[Event], sources: Sequence[str | None] = ()) -> bytes:
    """Compress a trajectory for the store; an event's content that is the start of one of
    `sources` (the attempt's stdout, its answer) is stored as a reference to it."""
    encoded = []
    for event in events:
        raw = event.to_dict()
        content = raw.get("content", "")
        for index, source in enumerate(sources):
            if prefix_of(source, content):
                raw["content_ref"] = [index, len(raw.pop("content"))]
                break
        encoded.append(raw)
    return compress(json.dumps(encoded).encode())


def decode(blob: bytes | None, sources: Sequence[str | None] = ()) -> list[Event]:
    """A stored trajectory, with the same `sources` as it was encoded with."""
    if not blob:
        return []
    events = []
    for raw in json.loads(zlib.decompress(blob)):
        reference = raw.pop("content_ref", None)
        if reference is not None:
            index, length = reference
            raw["content"] = (sources[index] or "")[:length]
        events.append(Event.from_dict(raw))
    return events


JUDGE_SOURCE = "judge"


def is_judge(event: Event) -> bool:
    return event.data is not None and event.data.get("source") == JUDGE_SOURCE


def token_totals(events: list[Event]) -> tuple[int, int, float | None]:
    """The agent's tokens in, tokens out and cost over the events (cost None when no event knew
    it); the judge's calls are costed apart (see judge_totals)."""
    return _totals([event for event in events if not is_judge(event)])


def judge_totals(events: list[Event]) -> tuple[int, int, float | None]:
    """Tokens in, tokens out and cost of the judge's calls alone."""
    return _totals([event for event in events if is_judge(event)])


def _totals(events: list[Event]) -> tuple[int, int, float | None]:
    tokens_in = sum(event.tokens_in or 0 for event in events)
    tokens_out = sum(event.tokens_out or 0 for event in events)
    costs = [event.cost_usd for event in events if event.cost_usd is not None]
    return tokens_in, tokens_out, (sum(costs) if costs else None)
