"""A fake model server, shipped with benchyard: real HTTP on loopback, speaking OpenAI chat
completions, the OpenAI Responses API and Anthropic Messages from the same scripts
(providers/fake_wire.py): streamed and whole replies, tool calls, reasoning, token usage, and
scripted faults (delays, 429 with Retry-After, 5xx,
connection resets, truncated streams, a trickle that never finishes, errors that echo the
request's headers). The test suite drives the provider, the tool-calling loop and the
judges through it; `benchyard fake-llm` serves it for anyone's pipeline.

In a test (a thread of its own, so sync and async code can both call it):

    with FakeLLM({"replies": [{"match": "2+2", "content": "4"}]}) as llm:
        ...  # point a provider at llm.url; llm.requests holds every request body received,
        ...  # llm.headers their headers, llm.apis the API each was for
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import threading
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

from benchyard.providers.fake_script import FakeReply, FakeScript, ScriptPlayer, load_script
from benchyard.providers.fake_wire import (
    TRAILERS,
    Answer,
    Api,
    Call,
    Frame,
    Usage,
    as_chat,
    document,
    error_body,
    frames,
    route,
)
from benchyard.providers.http_server import LoopbackServer, Request, Responder


class FakeLLM:
    def __init__(self, script: FakeScript | dict[str, Any] | Path | None = None) -> None:
        self.player = ScriptPlayer(load_script(script))
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # each request's headers, names in lower case
        self.apis: list[Api] = []  # which API each request was for: chat, responses, messages
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
        path = request.path.split("?", 1)[0].rstrip("/")  # Claude Code's `?beta=true`
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
        api = route(path) if request.method == "POST" else None
        if api is None:
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
        self.apis.append(api)
        if script.max_batch is None:
            await self._reply(request, respond, api, body, arrived)
            return
        if self._batch is None:
            self._batch = asyncio.Semaphore(script.max_batch)
        async with self._batch:  # a full batch: wait, then the schedule starts from the turn
            await self._reply(request, respond, api, body, loop.time())

    async def _reply(
        self, request: Request, respond: Responder, api: Api, body: dict[str, Any], arrived: float
    ) -> None:
        loop = asyncio.get_running_loop()
        chat = as_chat(api, body)
        reply = self.player.choose(chat)
        if reply.echo_headers:
            echoed = f"{reply.content} {json.dumps(request.headers, sort_keys=True)}".strip()
            reply = reply.model_copy(update={"content": echoed})
        start_at = arrived + self._wait_sec(reply, chat)  # the schedule counts from arrival
        await asyncio.sleep(start_at - loop.time())
        streamed = bool(body.get("stream"))
        if reply.fault == "reset":
            respond.reset()
        elif reply.fault == "trickle":
            await self._trickle(respond, api, reply, self._answer(reply, chat, streamed), body)
        elif reply.status is not None:
            await _send_error(respond, api, reply)
        elif streamed:
            answer = self._answer(reply, chat, streamed)
            await self._stream(respond, api, reply, answer, body, start_at)
        else:
            answer = self._answer(reply, chat, streamed)
            data = json.dumps(document(api, answer)).encode()
            send = respond.send_cut if reply.fault == "truncate" else respond.send
            await send(200, data, {"Content-Type": "application/json"})

    def _answer(self, reply: FakeReply, chat: dict[str, Any], streamed: bool) -> Answer:
        reported = reply.usage and (reply.stream_usage or not streamed)
        return Answer(
            number=next(self._ids),
            model=str(chat.get("model") or "fake"),
            content=reply.content,
            reasoning=reply.reasoning,
            calls=_calls(reply),
            finish=reply.finish,
            usage=_usage(reply, chat) if reported else None,
        )

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

    def _wait_sec(self, reply: FakeReply, chat: dict[str, Any]) -> float:
        """Before the reply starts: its delay and its prompt's prefill, or a warm cache's delay."""
        if reply.cached_delay_sec is not None:
            messages = json.dumps(chat.get("messages"), sort_keys=True).encode()
            key = hashlib.sha256(messages).hexdigest()
            seen, self._seen = key in self._seen, self._seen | {key}
            if seen:
                return reply.cached_delay_sec
        return reply.delay_sec + reply.prefill_sec_per_token * _usage(reply, chat).prompt

    async def _stream(
        self,
        respond: Responder,
        api: Api,
        reply: FakeReply,
        answer: Answer,
        body: dict[str, Any],
        started: float,
    ) -> None:
        """The events on a fixed schedule from `started` (loop time): those before the first
        token at once, then one every chunk_delay_sec (token k comes k times chunk_delay_sec
        after `started`), whatever the work and the sleeps' overshoots in between."""
        beats = _beats(frames(api, answer, body))
        await respond.start(200, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        cut_at = len(beats) // 2 if reply.fault == "truncate" else None
        loop = asyncio.get_running_loop()
        for position, beat in enumerate(beats):
            if position == cut_at:
                respond.cut()
                return
            await respond.chunk(beat)
            if reply.chunk_delay_sec:
                await asyncio.sleep(started + (position + 1) * reply.chunk_delay_sec - loop.time())
        await respond.chunk(TRAILERS[api])
        await respond.end()

    async def _trickle(
        self, respond: Responder, api: Api, reply: FakeReply, answer: Answer, body: dict[str, Any]
    ) -> None:
        """A response head (and, streamed, the events of the reply's content, without its end),
        then one byte every `chunk_delay_sec` until the client goes away: an empty line of a
        server-sent event stream, or a space of a JSON body that never comes."""
        interval = reply.chunk_delay_sec or 1.0
        stream = bool(body.get("stream"))
        if stream:
            await respond.start(200, {"Content-Type": "text/event-stream"})
            content = frames(api, replace(answer, reasoning="", calls=[]), body)
            last_token = max((i for i, frame in enumerate(content) if frame.token), default=-1)
            for frame in content[: last_token + 1]:
                await respond.chunk(frame.encode())
        else:
            await respond.start_sized(200, 1024 * 1024, {"Content-Type": "application/json"})
        while not respond.writer.is_closing():
            await (respond.chunk(b"\n") if stream else respond.raw(b" "))
            await asyncio.sleep(interval)


def _beats(events: list[Frame]) -> list[bytes]:
    """What a streamed reply sends at each tick of its schedule: the events before its first
    token together (at least the first event), then each event on its own."""
    first = next((index for index, frame in enumerate(events) if frame.token), 1) or 1
    head = b"".join(frame.encode() for frame in events[:first])
    return [head, *(frame.encode() for frame in events[first:])]


async def _send_error(respond: Responder, api: Api, reply: FakeReply) -> None:
    assert reply.status is not None
    headers = {}
    if reply.retry_after_sec is not None:
        headers["Retry-After"] = f"{reply.retry_after_sec:g}"
    message = reply.content or f"scripted HTTP {reply.status}"
    await respond.send(reply.status, error_body(api, reply.status, message), headers)


def _calls(reply: FakeReply) -> list[Call]:
    """Each scripted tool call, its arguments as JSON text."""
    return [
        Call(
            f"call_{index}",
            call.name,
            call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments),
        )
        for index, call in enumerate(reply.tool_calls)
    ]


def _words(text: str) -> int:
    return len(text.split())


def _usage(reply: FakeReply, chat: dict[str, Any]) -> Usage:
    """Token counts: as scripted, else estimated as words (plus a few per message)."""
    messages = chat.get("messages")
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
        arguments = sum(_words(call.arguments) for call in _calls(reply))
        completion = _words(reply.content) + reasoning + arguments
    return Usage(prompt, completion, reasoning)
