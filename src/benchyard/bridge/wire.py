"""What the bridge answers an agent, in the OpenAI chat-completions format: a whole completion or
its server-sent event stream, built from the reply benchyard's own client assembled."""

from __future__ import annotations

import json
import time
from typing import Any

from benchyard.providers.replies import ChatReply


def completion(reply: ChatReply, model: str, call_id: str) -> dict[str, Any]:
    """A non-streamed chat completion, named `model` (the name the agent asked for)."""
    return {
        "id": call_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": reply.as_message(), "finish_reason": _finish(reply)}],
        "usage": _usage(reply),
    }


def stream_events(reply: ChatReply, model: str, call_id: str) -> list[bytes]:
    """The same reply as server-sent events: the message, its tool calls, the finish and usage,
    then `[DONE]`."""
    head = {"id": call_id, "object": "chat.completion.chunk", "created": int(time.time())}
    head["model"] = model
    delta: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        delta["tool_calls"] = [
            {"index": index, **call}
            for index, call in enumerate(reply.as_message().get("tool_calls", []))
        ]
    chunks = [
        {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": _finish(reply)}]},
        {**head, "choices": [], "usage": _usage(reply)},
    ]
    return [b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks] + [
        b"data: [DONE]\n\n"
    ]


def error_body(message: str, kind: str) -> dict[str, Any]:
    """An error as OpenAI-style clients read it."""
    return {"error": {"message": message, "type": kind, "code": kind}}


def models(model: str) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "benchyard"}]}


def _finish(reply: ChatReply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def _usage(reply: ChatReply) -> dict[str, int]:
    tokens_in, tokens_out = reply.tokens_in or 0, reply.tokens_out or 0
    return {
        "prompt_tokens": tokens_in,
        "completion_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
    }
