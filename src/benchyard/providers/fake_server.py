"""A fake OpenAI-compatible chat server, shipped with benchyard: real HTTP on loopback, streamed
and whole replies, tool calls, reasoning, token usage, and scripted faults (delays, 429 with
Retry-After, 5xx, connection resets, truncated streams, a trickle that never finishes, errors that
echo the request's headers). The test suite drives the provider, the tool-calling loop and the
judges through it; `benchyard fake-llm` serves it for anyone's pipeline.

In a test (a thread of its own, so sync and async code can both call it):

    with FakeLLM({"replies": [{"match": "2+2", "content": "4"}]}) as llm:
        ...  # point a provider at llm.url; llm.requests holds every request body received,
        ...  # llm.headers their headers
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import re
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from benchyard.providers.fake_script import FakeReply, FakeScript, ScriptPlayer, load_script
from benchyard.providers.http_server import LoopbackServer, Request, Responder

_PIECE = re.compile(r"\s*\S+\s*|\s+")


class FakeLLM:
    def __init__(self, script: FakeScript | dict[str, Any] | Path | None = None) -> None:
        self.player = ScriptPlayer(load_script(script))
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # each request's headers, names in lower case
        self.server = LoopbackServer(self._handle)
        self._ids = itertools.count(1)
        self._seen: frozenset[str] = frozenset()  # hashes of messages a cache answered
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._batch: asyncio.Semaphore | None = None  # max_batch: made in the serving loop

    @property
    def url(self) -> str:
        """The base URL to configure a provider with (up to /v1)."""
        return f"http://127.0.0.1:{self.server.port}/v1"

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Serve from the running event loop."""
        await self.server.listen_tcp(host, port)

    async def close(self) -> None:
        await self.server.close()

    def __enter__(self) -> FakeLLM:
        """Serve from a thread of its own until the `with` block ends."""
        started = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            loop.run_until_complete(self.start())
            started.set()
            loop.run_forever()
            loop.run_until_complete(self.close())
            loop.close()

        self._thread = threading.Thread(target=serve, name="fake-llm", daemon=True)
        self._thread.start()
        started.wait()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    async def _handle(self, request: Request, respond: Responder) -> None:
        loop = asyncio.get_running_loop()
        arrived = loop.time()  # the request is read: scripted delays count from here
        script = self.player.script
        path = request.path.rstrip("/")
        if request.method == "GET" and (path.endswith("/models") or path == "/props"):
            await asyncio.sleep(script.probe_delay_sec)
            if path.endswith("/models"):
                await respond.send(200, {"object": "list", "data": script.models})
            elif script.props is not None:
                await respond.send(200, script.props)
            else:
                await respond.send(404, {"error": {"message": "no /props here"}})
            return
        if request.method == "POST" and path == "/tokenize" and script.tokenizer:
            await self._tokenize(request, respond)
            return
        if request.method != "POST" or not request.path.rstrip("/").endswith("/chat/completions"):
            await respond.send(
                404, {"error": {"message": f"no route {request.method} {request.path}"}}
            )
            return
        try:
            body = request.json()
            if not isinstance(body, dict):
                raise ValueError("not a JSON object")
        except ValueError as error:
            await respond.send(400, {"error": {"message": f"invalid JSON body: {error}"}})
            return
        self.requests.append(body)
        self.headers.append(request.headers)
        if script.max_batch is None:
            await self._chat(request, respond, body, arrived)
            return
        if self._batch is None:
            self._batch = asyncio.Semaphore(script.max_batch)
        async with self._batch:  # a full batch: wait, then the schedule starts from the turn
            await self._chat(request, respond, body, loop.time())

    async def _chat(
        self, request: Request, respond: Responder, body: dict[str, Any], arrived: float
    ) -> None:
        loop = asyncio.get_running_loop()
        reply = self.player.choose(body)
        if reply.echo_headers:
            echoed = f"{reply.content} {json.dumps(request.headers, sort_keys=True)}".strip()
            reply = reply.model_copy(update={"content": echoed})
        start_at = arrived + self._wait_sec(reply, body)  # the schedule counts from arrival
        await asyncio.sleep(start_at - loop.time())
        if reply.fault == "reset":
            respond.reset()
        elif reply.fault == "trickle":
            await self._trickle(respond, reply, body)
        elif reply.status is not None:
            await _send_error(respond, reply)
        elif body.get("stream"):
            await self._stream(respond, reply, body, start_at)
        else:
            await self._whole(respond, reply, body)

    async def _tokenize(self, request: Request, respond: Responder) -> None:
        """llama.cpp's POST /tokenize: the content's tokens, one per word (as `_usage` counts)."""
        try:
            body = request.json()
            content = body.get("content") if isinstance(body, dict) else None
            if not isinstance(content, str):
                raise ValueError("no content")
        except ValueError as error:
            await respond.send(400, {"error": {"message": f"invalid tokenize body: {error}"}})
            return
        await respond.send(200, {"tokens": list(range(_words(content)))})

    def _wait_sec(self, reply: FakeReply, body: dict[str, Any]) -> float:
        """Before the reply starts: its delay and its prompt's prefill, or a warm cache's delay."""
        if reply.cached_delay_sec is not None:
            messages = json.dumps(body.get("messages"), sort_keys=True).encode()
            key = hashlib.sha256(messages).hexdigest()
            seen, self._seen = key in self._seen, self._seen | {key}
            if seen:
                return reply.cached_delay_sec
        prompt_tokens: int = _usage(reply, body)["prompt_tokens"]
        return reply.delay_sec + reply.prefill_sec_per_token * prompt_tokens

    async def _whole(self, respond: Responder, reply: FakeReply, body: dict[str, Any]) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["content"] = reply.content or None
            message["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for call_id, name, arguments in _calls(reply)
            ]
        completion = {
            **self._envelope(body, "chat.completion"),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish}],
        }
        if reply.usage:
            completion["usage"] = _usage(reply, body)
        data = json.dumps(completion).encode()
        send = respond.send_cut if reply.fault == "truncate" else respond.send
        await send(200, data, {"Content-Type": "application/json"})

    async def _stream(
        self, respond: Responder, reply: FakeReply, body: dict[str, Any], started: float
    ) -> None:
        """The chunks on a fixed schedule from `started` (loop time): token k comes k times
        chunk_delay_sec after it, whatever the work and the sleeps' overshoots in between."""
        envelope = self._envelope(body, "chat.completion.chunk")
        chunks: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        chunks += [{"reasoning_content": piece} for piece in _PIECE.findall(reply.reasoning)]
        chunks += [{"content": piece} for piece in _PIECE.findall(reply.content)]
        for index, (call_id, name, arguments) in enumerate(_calls(reply)):
            head = {"index": index, "id": call_id, "type": "function"}
            chunks.append({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]})
            chunks += [
                {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                for piece in _PIECE.findall(arguments)
            ]
        events = [
            {**envelope, "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
            for d in chunks
        ]
        events.append(
            {**envelope, "choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish}]}
        )
        wants_usage = (body.get("stream_options") or {}).get("include_usage")
        if reply.usage and reply.stream_usage and wants_usage:
            events.append({**envelope, "choices": [], "usage": _usage(reply, body)})
        await respond.start(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        cut_at = len(events) // 2 if reply.fault == "truncate" else None
        loop = asyncio.get_running_loop()
        for position, event in enumerate(events):
            if position == cut_at:
                respond.cut()
                return
            await respond.chunk(b"data: " + json.dumps(event).encode() + b"\n\n")
            if reply.chunk_delay_sec:
                await asyncio.sleep(started + (position + 1) * reply.chunk_delay_sec - loop.time())
        await respond.chunk(b"data: [DONE]\n\n")
        await respond.end()

    async def _trickle(self, respond: Responder, reply: FakeReply, body: dict[str, Any]) -> None:
        """A response head (and, streamed, the reply's content without its end), then one byte
        every `chunk_delay_sec` until the client goes away: an empty line of a server-sent event
        stream, or a space of a JSON body that never comes."""
        interval = reply.chunk_delay_sec or 1.0
        stream = bool(body.get("stream"))
        if stream:
            await respond.start(200, {"Content-Type": "text/event-stream"})
            envelope = self._envelope(body, "chat.completion.chunk")
            for piece in _PIECE.findall(reply.content):
                delta = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
                await respond.chunk(
                    b"data: %s\n\n" % json.dumps({**envelope, "choices": [delta]}).encode()
                )
        else:
            await respond.start_sized(200, 1024 * 1024, {"Content-Type": "application/json"})
        while not respond.writer.is_closing():
            await (respond.chunk(b"\n") if stream else respond.raw(b" "))
            await asyncio.sleep(interval)

    def _envelope(self, body: dict[str, Any], kind: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": kind,
            "created": int(time.time()),
            "model": str(body.get("model") or "fake"),
        }


async def _send_error(respond: Responder, reply: FakeReply) -> None:
    assert reply.status is not None
    headers = {}
    if reply.retry_after_sec is not None:
        headers["Retry-After"] = f"{reply.retry_after_sec:g}"
    kind = "rate_limit_exceeded" if reply.status == 429 else "server_error"
    message = reply.content or f"scripted HTTP {reply.status}"
    await respond.send(reply.status, {"error": {"message": message, "type": kind}}, headers)


def _calls(reply: FakeReply) -> list[tuple[str, str, str]]:
    """(id, name, arguments as JSON text) of each scripted tool call."""
    return [
        (
            f"call_{index}",
            call.name,
            call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments),
        )
        for index, call in enumerate(reply.tool_calls)
    ]


def _words(text: str) -> int:
    return len(text.split())


def _usage(reply: FakeReply, body: dict[str, Any]) -> dict[str, Any]:
    """Token counts: as scripted, else estimated as words (plus a few per message)."""
    messages = body.get("messages")
    prompt = reply.prompt_tokens
    if prompt is None:
        prompt = sum(
            3 + _words(str(m.get("content") or ""))
            for m in (messages if isinstance(messages, list) else [])
            if isinstance(m, dict)
        )
    reasoning = (
        reply.reasoning_tokens if reply.reasoning_tokens is not None else _words(reply.reasoning)
    )
    completion = reply.completion_tokens
    if completion is None:
        arguments = sum(_words(arguments) for _, _, arguments in _calls(reply))
        completion = _words(reply.content) + reasoning + arguments
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }
