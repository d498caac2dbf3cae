"""A model's reply to one chat request, assembled from a whole JSON response or from the chunks of
a streamed one, and recorded as a trajectory event."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchyard.runner.trajectory import Event, believable_count
from benchyard.secrets import scrub

REASONING_KEYS = (
    "reasoning_content",
    "reasoning",
)  # llama.cpp, vLLM, DeepSeek / OpenRouter, Ollama


class MalformedReply(ValueError):
    """The endpoint answered something that is not a chat completion (retried like a truncation)."""


@dataclass
class ModelToolCall:
    """A tool call as the model wrote it: the arguments are the model's JSON text, unchecked."""

    call_id: str
    name: str
    arguments: str


@dataclass
class ChatReply:
    model: str
    content: str = ""
    reasoning: str = ""
    tool_calls: list[ModelToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    reasoning_tokens: int | None = None
    started_at: float = 0.0  # time.time() when the request was sent
    latency_sec: float = 0.0  # request sent to reply complete, the last try only
    ttft_sec: float | None = None  # to the first streamed token (content, reasoning or tool call)
    cost_usd: float | None = None
    # Streamed replies, seconds from the try's start (benchyard speed): the request written out
    # (after a connection, and the client's own work on other requests), the first reasoning
    # token, the first content or tool-call token, the last token; and the chunks with tokens.
    sent_sec: float | None = None
    reasoning_ttft_sec: float | None = None
    content_ttft_sec: float | None = None
    last_token_sec: float | None = None
    token_chunks: int = 0

    @property
    def lost_to_reasoning(self) -> bool:
        """An empty answer because the token budget went to reasoning."""
        thought = bool(self.reasoning.strip()) or bool(self.reasoning_tokens)
        return (
            not self.content.strip()
            and not self.tool_calls
            and self.finish_reason == "length"
            and thought
        )

    def to_event(self, role: str = "assistant", source: str = "model") -> Event:
        data: dict[str, Any] = {"source": source, "model": self.model}
        if self.finish_reason:
            data["finish_reason"] = self.finish_reason
        if self.reasoning_tokens is not None:
            data["reasoning_tokens"] = self.reasoning_tokens
        if self.tool_calls:
            data["tool_calls"] = [
                {"id": call.call_id, "name": call.name, "arguments": call.arguments}
                for call in self.tool_calls
            ]
        return Event(
            kind="message",
            role=role,
            content=self.content,
            ts=self.started_at,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            cost_usd=self.cost_usd,
            reasoning=self.reasoning or None,
            latency_sec=round(self.latency_sec, 6),
            ttft_sec=round(self.ttft_sec, 6) if self.ttft_sec is not None else None,
            data=data,
        )

    def as_message(self) -> dict[str, Any]:
        """The assistant message to send back in the conversation (content "" rather than null
        beside tool calls: some servers, llama.cpp's Python one among them, refuse null)."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        return message


def reply_from_json(model: str, body: Any) -> ChatReply:
    """A non-streamed chat completion."""
    choice = _first_choice(body)
    message = choice.get("message")
    if not isinstance(message, dict):
        raise MalformedReply("the reply's choice has no message")
    reply = ChatReply(model=model, finish_reason=choice.get("finish_reason"))
    reply.content = _text(message.get("content"))
    reply.reasoning = next((_text(message[k]) for k in REASONING_KEYS if message.get(k)), "")
    for index, raw in enumerate(message.get("tool_calls") or []):
        function = raw.get("function") or {}
        arguments = function.get("arguments")
        reply.tool_calls.append(
            ModelToolCall(
                call_id=str(raw.get("id") or f"call_{index}"),
                name=str(function.get("name") or ""),
                arguments=arguments if isinstance(arguments, str) else _json(arguments),
            )
        )
    _read_usage(reply, body.get("usage"))
    return reply


@dataclass
class StreamAssembler:
    """Builds a ChatReply from streamed chunks; `complete` once the stream said it finished."""

    reply: ChatReply
    done: bool = False
    got_token: bool = False
    got_reasoning: bool = False  # did the last chunk added bring reasoning? content or a tool call?
    got_content: bool = False
    _calls: dict[int, ModelToolCall] = field(default_factory=dict)

    def add(self, chunk: Any) -> None:
        if not isinstance(chunk, dict):
            raise MalformedReply("a streamed chunk is not a JSON object")
        if "error" in chunk:
            error = scrub(_text(chunk["error"]))  # before cutting: half a key must not survive
            raise MalformedReply(f"the stream reported an error: {error[:200]}")
        self.got_reasoning = self.got_content = False
        _read_usage(self.reply, chunk.get("usage"))
        for choice in chunk.get("choices") or []:
            self._add_delta(choice.get("delta") or {})
            if choice.get("finish_reason"):
                self.reply.finish_reason = choice["finish_reason"]

    def _add_delta(self, delta: dict[str, Any]) -> None:
        before = (len(self.reply.content), len(self.reply.reasoning), len(self._calls))
        self.reply.content += _text(delta.get("content"))
        for key in REASONING_KEYS:
            self.reply.reasoning += _text(delta.get(key))
        self.got_reasoning = len(self.reply.reasoning) != before[1]
        self.got_content = len(self.reply.content) != before[0] or bool(delta.get("tool_calls"))
        for raw in delta.get("tool_calls") or []:
            index = int(raw.get("index", len(self._calls)))
            call = self._calls.setdefault(index, ModelToolCall(f"call_{index}", "", ""))
            function = raw.get("function") or {}
            call.call_id = str(raw.get("id") or call.call_id)
            call.name += _text(function.get("name"))
            call.arguments += _text(function.get("arguments"))
            self.got_token = True
        if (len(self.reply.content), len(self.reply.reasoning), len(self._calls)) != before:
            self.got_token = True

    @property
    def complete(self) -> bool:
        return self.done or self.reply.finish_reason is not None

    def finish(self) -> ChatReply:
        self.reply.tool_calls = [self._calls[index] for index in sorted(self._calls)]
        return self.reply


def _first_choice(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise MalformedReply("the reply is not a JSON object")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedReply("the reply has no choices")
    return choices[0]


def _read_usage(reply: ChatReply, usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    reply.tokens_in = _count(usage.get("prompt_tokens"), reply.tokens_in)
    reply.tokens_out = _count(usage.get("completion_tokens"), reply.tokens_out)
    details = usage.get("completion_tokens_details")
    if isinstance(details, dict):
        reply.reasoning_tokens = _count(details.get("reasoning_tokens"), reply.reasoning_tokens)


def _count(value: Any, previous: int | None) -> int | None:
    """A usage count the provider reports, when it can be believed (runner/trajectory.py: whole,
    from 0 to 100,000,000): a 4,000-digit count made the cost overflow."""
    counted = believable_count(value)
    return counted if counted is not None else previous


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else _json(value)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)
