"""The pass-through's pieces that need no server: a secret scrubbed however a stream cuts it, and
the record read from a reply of each API."""

from __future__ import annotations

import json

import pytest

from benchyard.bridge.passthrough import KeyScrubber, read_reply
from benchyard.providers.replies import ChatReply

KEY = "sk-secret-0123456789"
TEXT = f'{{"echo": "Bearer {KEY}", "again": "{KEY}"}}'.encode()


@pytest.mark.parametrize("size", [1, 2, 3, 7, len(KEY) - 1, len(KEY), len(KEY) + 1, 1000])
def test_a_secret_cut_across_pieces_never_passes(size: int) -> None:
    scrubber = KeyScrubber([KEY, None])
    pieces = [TEXT[i : i + size] for i in range(0, len(TEXT), size)]
    passed = b"".join(scrubber.feed(piece) for piece in pieces) + scrubber.flush()
    assert KEY.encode() not in passed
    assert passed == TEXT.replace(KEY.encode(), b"[redacted]")


def test_an_anthropic_stream_is_read_for_text_tool_calls_and_tokens() -> None:
    events = [
        {"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 12}}},
        {"type": "content_block_start", "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Let me look"}},
        {
            "type": "content_block_start",
            "content_block": {"type": "tool_use", "id": "t1", "name": "grep", "input": {}},
        },
        {"type": "content_block_delta", "delta": {"partial_json": '{"q": '}},
        {"type": "content_block_delta", "delta": {"partial_json": '"x"}'}},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
    ]
    data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    reply = ChatReply(model="m")
    read_reply("messages", data, reply)
    assert reply.content == "Let me look"
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("grep", '{"q": "x"}')]
    assert (reply.tokens_in, reply.tokens_out, reply.finish_reason) == (12, 9, "tool_use")


def test_a_whole_responses_reply_is_read() -> None:
    document = {
        "status": "completed",
        "output": [
            {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
            {"type": "message", "content": [{"type": "output_text", "text": "done"}]},
        ],
        "usage": {"input_tokens": 5, "output_tokens": 2},
    }
    reply = ChatReply(model="m")
    read_reply("responses", json.dumps(document).encode(), reply)
    assert reply.content == "done" and reply.tool_calls[0].name == "ls"
    assert (reply.tokens_in, reply.tokens_out) == (5, 2)
