"""The three APIs benchyard's fake server speaks, from the same scripts: OpenAI chat completions
(`POST /v1/chat/completions`), the OpenAI Responses API (`POST /v1/responses`) and Anthropic
Messages (`POST /v1/messages`), each whole or streamed as its own server-sent events.

A request is read as the chat conversation it holds (`as_chat`), which chooses the scripted reply
and counts the prompt's tokens; the reply (`Answer`) is written as that API's JSON document
(`document`) or as its events (`frames`), in the order the official clients expect them."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, Literal

Api = Literal["chat", "responses", "messages"]
ROUTES: dict[str, Api] = {
    "/chat/completions": "chat",
    "/responses": "responses",
    "/messages": "messages",
}
MAX_PART_DEPTH = 8
PIECE = re.compile(r"\s*\S+\s*|\s+")
"""One streamed token: a word with the spaces around it."""


def route(path: str) -> Api | None:
    """The API a POST to `path` (`/v1/...`) is for; None when it is for none."""
    path = path.rstrip("/")
    return next((api for suffix, api in ROUTES.items() if path.endswith(suffix)), None)


@dataclass(frozen=True)
class Call:
    call_id: str
    name: str
    arguments: str  # JSON text, as scripted


@dataclass(frozen=True)
class Usage:
    prompt: int
    completion: int
    reasoning: int


@dataclass(frozen=True)
class Answer:
    """A scripted reply as the server sends it, whatever the API."""

    number: int  # makes the ids of one reply unique
    model: str
    content: str
    reasoning: str
    calls: list[Call]
    finish: str  # as chat completions say it: stop, tool_calls, length, ...
    usage: Usage | None


@dataclass(frozen=True)
class Frame:
    """One server-sent event; `token` when it carries a token of the reply."""

    data: dict[str, Any]
    token: bool = False
    name: str | None = None  # the event's `event:` line (Responses and Messages name theirs)

    def encode(self) -> bytes:
        head = f"event: {self.name}\n" if self.name else ""
        return f"{head}data: {json.dumps(self.data)}\n\n".encode()


# --- requests ------------------------------------------------------------------------------------


def as_chat(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    """The request as a chat completion's `model` and `messages` (text only)."""
    if api == "chat":
        return body
    read = _responses_messages if api == "responses" else _anthropic_messages
    return {"model": body.get("model"), "messages": read(body)}


def _responses_messages(body: dict[str, Any]) -> list[dict[str, str]]:
    messages = _system(body.get("instructions"))
    items = body.get("input")
    if isinstance(items, str):
        return [*messages, {"role": "user", "content": items}]
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call_output":
            messages.append({"role": "tool", "content": _text(item.get("output"))})
        elif item.get("type") == "function_call":
            messages.append({"role": "assistant", "content": _text(item.get("arguments"))})
        elif isinstance(item.get("role"), str):
            messages.append({"role": item["role"], "content": _text(item.get("content"))})
    return messages


def _anthropic_messages(body: dict[str, Any]) -> list[dict[str, str]]:
    messages = _system(body.get("system"))
    turns = body.get("messages") or []
    # a `system` message among them (Claude Code's context) counts as the system's, before the
    # others: never the message a reply answers
    context = [m for m in turns if isinstance(m, dict) and m.get("role") == "system"]
    messages += [{"role": "system", "content": _text(m.get("content"))} for m in context]
    for message in turns:
        if not isinstance(message, dict) or message.get("role") == "system":
            continue
        role, content = str(message.get("role") or "user"), message.get("content")
        blocks: list[Any] = content if isinstance(content, list) else [content]
        results = [block for block in blocks if _is_tool_result(block)]
        messages += [{"role": "tool", "content": _text(block.get("content"))} for block in results]
        text = _text([block for block in blocks if not _is_tool_result(block)])
        if text.strip() or not results:  # a message of tool results alone adds no empty one
            messages.append({"role": role, "content": text})
    return messages


def _system(system: Any) -> list[dict[str, str]]:
    text = _text(system)
    return [{"role": "system", "content": text}] if text else []


def _is_tool_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_result"


def _text(content: Any, depth: int = 0) -> str:
    """The text of a message's content: a string, or the `text` of its parts (nested no deeper
    than a few levels: a request nested a thousand deep is read as no text, never a crash)."""
    if isinstance(content, str):
        return content
    if depth > MAX_PART_DEPTH:
        return ""
    if isinstance(content, list):
        return " ".join(_text(part, depth + 1) for part in content)
    if isinstance(content, dict):
        return _text(content.get("text", content.get("content")), depth + 1)
    return ""


# --- whole replies -------------------------------------------------------------------------------


def document(api: Api, answer: Answer) -> dict[str, Any]:
    """The reply as one JSON document of `api`."""
    if api == "chat":
        return _chat_document(answer)
    if api == "responses":
        return _response(answer, "completed")
    return _anthropic_message(answer, whole=True)


def _chat_document(answer: Answer) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": answer.content}
    if answer.reasoning:
        message["reasoning_content"] = answer.reasoning
    if answer.calls:
        message["content"] = answer.content or None
        message["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in answer.calls
        ]
    completion = {
        **_chat_envelope(answer, "chat.completion"),
        "choices": [{"index": 0, "message": message, "finish_reason": answer.finish}],
    }
    if answer.usage:
        completion["usage"] = chat_usage(answer.usage)
    return completion


def chat_usage(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.prompt,
        "completion_tokens": usage.completion,
        "total_tokens": usage.prompt + usage.completion,
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning},
    }


def _chat_envelope(answer: Answer, kind: str) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-fake-{answer.number}",
        "object": kind,
        "created": int(time.time()),
        "model": answer.model,
    }


def _response(answer: Answer, status: str, *, done: bool = True) -> dict[str, Any]:
    """A Responses API `response` object: `done`, with its output items and usage."""
    incomplete = done and answer.finish == "length"
    return {
        "id": f"resp_fake_{answer.number}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if incomplete else status,
        "model": answer.model,
        "output": _output_items(answer) if done else [],
        "usage": _responses_usage(answer.usage) if done and answer.usage else None,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "instructions": None,
        "metadata": {},
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def _responses_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": usage.completion,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning},
        "total_tokens": usage.prompt + usage.completion,
    }


def _output_items(answer: Answer) -> list[dict[str, Any]]:
    """The reply's output items, complete: its reasoning, its message, its function calls."""
    items = []
    if answer.reasoning:
        items.append(_reasoning_item(answer, answer.reasoning, "completed"))
    if answer.content or not answer.calls:
        items.append(_message_item(answer, answer.content, "completed"))
    items += [_call_item(answer, call, call.arguments, "completed") for call in answer.calls]
    return items


def _reasoning_item(answer: Answer, text: str | None, status: str) -> dict[str, Any]:
    content = [] if text is None else [{"type": "reasoning_text", "text": text}]
    return {
        "type": "reasoning",
        "id": f"rs_fake_{answer.number}",
        "summary": [],
        "content": content,
        "status": status,
    }


def _message_item(answer: Answer, text: str | None, status: str) -> dict[str, Any]:
    content = [] if text is None else [_output_text(text)]
    return {
        "type": "message",
        "id": f"msg_fake_{answer.number}",
        "role": "assistant",
        "status": status,
        "content": content,
    }


def _output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def _call_item(answer: Answer, call: Call, arguments: str, status: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_fake_{answer.number}_{call.call_id}",
        "call_id": call.call_id,
        "name": call.name,
        "arguments": arguments,
        "status": status,
    }


STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def _anthropic_message(answer: Answer, *, whole: bool) -> dict[str, Any]:
    """An Anthropic `message`: whole, or as `message_start` opens it (no content yet)."""
    usage = answer.usage
    message: dict[str, Any] = {
        "id": f"msg_fake_{answer.number}",
        "type": "message",
        "role": "assistant",
        "model": answer.model,
        "content": _anthropic_blocks(answer) if whole else [],
        "stop_reason": STOP_REASONS.get(answer.finish, answer.finish) if whole else None,
        "stop_sequence": None,
    }
    if usage is not None:
        message["usage"] = {
            "input_tokens": usage.prompt,
            "output_tokens": usage.completion if whole else 0,
        }
    return message


def _anthropic_blocks(answer: Answer) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if answer.reasoning:
        blocks.append({"type": "thinking", "thinking": answer.reasoning, "signature": "fake"})
    if answer.content or not answer.calls:
        blocks.append({"type": "text", "text": answer.content})
    blocks += [_tool_use(call, _input(call.arguments)) for call in answer.calls]
    return blocks


def _tool_use(call: Call, given: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call.call_id, "name": call.name, "input": given}


def _input(arguments: str) -> dict[str, Any]:
    """A tool call's input as Anthropic sends it whole: an object (scripted arguments that are
    not a JSON object are sent as {})."""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


# --- streamed replies ----------------------------------------------------------------------------


def frames(api: Api, answer: Answer, body: dict[str, Any]) -> list[Frame]:
    """The reply as `api`'s server-sent events, in order."""
    if api == "chat":
        return _chat_frames(answer, body)
    if api == "responses":
        return _ResponseStream(answer).frames()
    return _anthropic_frames(answer)


TRAILERS: dict[Api, bytes] = {"chat": b"data: [DONE]\n\n", "responses": b"", "messages": b""}
"""What follows the last event of each API's stream."""


def _chat_frames(answer: Answer, body: dict[str, Any]) -> list[Frame]:
    envelope = _chat_envelope(answer, "chat.completion.chunk")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**envelope, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [Frame(chunk({"role": "assistant", "content": ""}))]
    out += [Frame(chunk({"reasoning_content": p}), True) for p in PIECE.findall(answer.reasoning)]
    out += [Frame(chunk({"content": piece}), True) for piece in PIECE.findall(answer.content)]
    for index, call in enumerate(answer.calls):
        head = {"index": index, "id": call.call_id, "type": "function"}
        function = {"name": call.name, "arguments": ""}
        out.append(Frame(chunk({"tool_calls": [{**head, "function": function}]}), True))
        out += [
            Frame(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}), True)
            for piece in PIECE.findall(call.arguments)
        ]
    out.append(Frame(chunk({}, answer.finish)))
    wants_usage = (body.get("stream_options") or {}).get("include_usage")
    if answer.usage and wants_usage:
        out.append(Frame({**envelope, "choices": [], "usage": chat_usage(answer.usage)}))
    return out


class _ResponseStream:
    """The Responses API's typed events: `response.created`, then each output item added, its
    deltas, done; then `response.completed` (or `response.incomplete`) with the usage."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.out: list[Frame] = []

    def emit(self, kind: str, token: bool = False, **fields: Any) -> None:
        data = {"type": kind, "sequence_number": len(self.out), **fields}
        self.out.append(Frame(data, token, kind))

    def frames(self) -> list[Frame]:
        answer = self.answer
        self.emit("response.created", response=_response(answer, "in_progress", done=False))
        self.emit("response.in_progress", response=_response(answer, "in_progress", done=False))
        for index, item in enumerate(_output_items(answer)):
            self.item(index, item)
        final = _response(answer, "completed")
        done = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
        self.emit(done, response=final)
        return self.out

    def item(self, index: int, item: dict[str, Any]) -> None:
        at = {"output_index": index, "item_id": item["id"]}
        if item["type"] == "function_call":
            opened = {**item, "arguments": "", "status": "in_progress"}
            self.emit("response.output_item.added", output_index=index, item=opened)
            for piece in PIECE.findall(item["arguments"]):
                self.emit("response.function_call_arguments.delta", True, **at, delta=piece)
            self.emit(
                "response.function_call_arguments.done",
                **at,
                name=item["name"],
                arguments=item["arguments"],
            )
        else:
            text = item["content"][0]["text"]
            opened = {**item, "content": [], "status": "in_progress"}
            self.emit("response.output_item.added", output_index=index, item=opened)
            self.part(at, item["type"], text)
        self.emit("response.output_item.done", output_index=index, item=item)

    def part(self, at: dict[str, Any], kind: str, text: str) -> None:
        """A message's output text, or a reasoning item's reasoning text, delta by delta."""
        at = {**at, "content_index": 0}
        if kind == "reasoning":
            for piece in PIECE.findall(text):
                self.emit("response.reasoning_text.delta", True, **at, delta=piece)
            self.emit("response.reasoning_text.done", **at, text=text)
            return
        self.emit("response.content_part.added", **at, part=_output_text(""))
        for piece in PIECE.findall(text):
            self.emit("response.output_text.delta", True, **at, delta=piece, logprobs=[])
        self.emit("response.output_text.done", **at, text=text, logprobs=[])
        self.emit("response.content_part.done", **at, part=_output_text(text))


def _anthropic_frames(answer: Answer) -> list[Frame]:
    """Anthropic's events: `message_start`, each content block started, its deltas, stopped;
    `message_delta` with the stop reason and the output tokens; `message_stop`."""
    out = [_named({"type": "message_start", "message": _anthropic_message(answer, whole=False)})]
    calls = {call.call_id: call for call in answer.calls}
    for index, block in enumerate(_anthropic_blocks(answer)):
        opened, deltas = _block_stream(block, calls)
        out.append(_named({"type": "content_block_start", "index": index, "content_block": opened}))
        out += [
            _named({"type": "content_block_delta", "index": index, "delta": delta}, True)
            for delta in deltas
        ]
        out.append(_named({"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": STOP_REASONS.get(answer.finish, answer.finish), "stop_sequence": None}
    closing: dict[str, Any] = {"type": "message_delta", "delta": delta}
    if answer.usage is not None:
        closing["usage"] = {"output_tokens": answer.usage.completion}
    return [*out, _named(closing), _named({"type": "message_stop"})]


def _block_stream(
    block: dict[str, Any], calls: dict[str, Call]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A content block as `content_block_start` opens it, and its deltas."""
    if block["type"] == "thinking":
        pieces = PIECE.findall(block["thinking"])
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in pieces]
        signed = {"type": "signature_delta", "signature": block["signature"]}
        return {**block, "thinking": "", "signature": ""}, [*deltas, signed]
    if block["type"] == "tool_use":  # the arguments as scripted, piece by piece
        pieces = PIECE.findall(calls[block["id"]].arguments)
        return {**block, "input": {}}, [
            {"type": "input_json_delta", "partial_json": piece} for piece in pieces
        ]
    pieces = PIECE.findall(block["text"])
    return {**block, "text": ""}, [{"type": "text_delta", "text": piece} for piece in pieces]


def _named(data: dict[str, Any], token: bool = False) -> Frame:
    return Frame(data, token, data["type"])


# --- errors --------------------------------------------------------------------------------------


def error_body(api: Api, status: int, message: str) -> dict[str, Any]:
    """An HTTP error's body, as `api`'s servers write it."""
    if api == "messages":
        kind = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}
        default = "api_error" if status >= 500 else "invalid_request_error"
        return {"type": "error", "error": {"type": kind.get(status, default), "message": message}}
    kind_name = "rate_limit_exceeded" if status == 429 else "server_error"
    return {"error": {"message": message, "type": kind_name}}
