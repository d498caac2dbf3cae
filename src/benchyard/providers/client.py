"""The client of an OpenAI-compatible chat endpoint, on httpx: streaming or not, a limit on the
requests in flight, and retries of 429, 5xx, connection errors and truncated streams with
exponential backoff and jitter, honouring Retry-After. Each retry is written to the trajectory as
an infrastructure event; only a provider that stays unavailable fails the attempt (as an error).

Every try has a total deadline (`request_timeout_sec`: connecting, sending, and the whole reply,
streamed or not), so a provider that trickles bytes without ever finishing is a retried fault.
A caller with a deadline of its own (the `openai` agent) follows its calls with a `CallWatch`.
The values of configured secrets are scrubbed from every message (benchyard/secrets.py)."""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from benchyard import secrets
from benchyard.backoff import backoff_delay
from benchyard.providers.config import (
    ModelConfig,
    ProviderConfig,
    ProviderConfigError,
    register_provider_secrets,
)
from benchyard.providers.replies import ChatReply, MalformedReply, StreamAssembler, reply_from_json
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import Event

if TYPE_CHECKING:
    import httpx

RETRIED_STATUS = frozenset({408, 409, 425, 429})
POOL_CONNECTIONS = 32
ERROR_BODY_CHARS = 300
CONNECT_TIMEOUT_SEC = 30.0
SCRIPTED_SOURCE = "bridge"  # the one caller that serves a provider's script (bridge/canned.py)


class RetryableError(Exception):
    """A fault worth another try: its message goes to the trajectory, `retry_after_sec` (from the
    Retry-After header) overrides the backoff."""

    def __init__(
        self, message: str, status: int | None = None, retry_after_sec: float | None = None
    ):
        super().__init__(message)
        self.status = status
        self.retry_after_sec = retry_after_sec

    def scrub(self) -> None:
        """Scrub the values of configured secrets from the message (a server may echo them)."""
        self.args = (secrets.scrub(str(self)),)


CallState = Literal["idle", "queued", "backoff", "requesting"]


@dataclass
class CallWatch:
    """What a caller's model calls are doing, for a caller whose own deadline may pass during one.

    `state`: idle (between calls), queued (waiting for one of the provider's request slots),
    backoff (waiting to retry after `last_fault`), requesting (a try in flight). `progress` is set
    whenever a try receives tokens or a whole reply. Once the caller sets `overtime`, a fault is no
    longer retried: the call ends as PROVIDER_UNAVAILABLE."""

    state: CallState = "idle"
    last_fault: str | None = None
    overtime: bool = False
    progress: asyncio.Event = field(default_factory=asyncio.Event)


class ProviderClient:
    """One model behind one endpoint; share one instance across the attempts of a run so that
    `max_concurrent` holds for the whole run. Close it with `aclose()`."""

    def __init__(self, config: ModelConfig, source: str = "model") -> None:
        if config.provider.script is not None and source != SCRIPTED_SOURCE:
            raise ProviderConfigError(
                f"model '{config.model}' ({source}): its provider has a script of replies, which "
                "only the model bridge serves; give this provider a base_url"
            )
        self.config = config
        self.source = source
        self._pools: _Pools | None = None
        register_provider_secrets(config.provider)

    async def chat(
        self,
        messages: list[dict[str, Any]],
        sink: list[Event],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | None = None,
        overrides: dict[str, Any] | None = None,
        watch: CallWatch | None = None,
    ) -> ChatReply:
        """One model call, retried on infrastructure faults (each retry logged to `sink`)."""
        return await self.complete(self._body(messages, tools, tool_choice, overrides), sink, watch)

    async def complete(
        self, body: dict[str, Any], sink: list[Event], watch: CallWatch | None = None
    ) -> ChatReply:
        """One model call of a whole request `body` (the model bridge relays an agent's), retried
        on infrastructure faults (each retry logged to `sink`), priced with the model's price."""
        watch = watch or CallWatch()
        try:
            reply = await self._tries(body, sink, watch)
        finally:
            watch.state = "idle"
        if self.config.price is not None:
            reply.cost_usd = self.config.price.cost_usd(reply.tokens_in, reply.tokens_out)
        return reply

    async def _tries(self, body: dict[str, Any], sink: list[Event], watch: CallWatch) -> ChatReply:
        provider = self.config.provider
        for try_number in range(1, provider.max_retries + 2):
            try:
                return await self._limited(body, watch)
            except RetryableError as fault:
                fault.scrub()
                if try_number > provider.max_retries or watch.overtime:
                    why = (
                        "no time left to retry: the attempt's time ran out"
                        if watch.overtime
                        else f"gave up after {provider.max_retries} retries"
                    )
                    raise AttemptFailure(
                        FailureKind.PROVIDER_UNAVAILABLE, f"{self.who()}: {fault} ({why})"
                    ) from None
                delay = self.retry_delay(fault, try_number)
                sink.append(self.retry_event(fault, try_number, delay))
                watch.state, watch.last_fault = "backoff", str(fault)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        if self._pools is not None:
            await self._pools.aclose()
            self._pools = None

    def who(self) -> str:
        return f"{self.source} {self.config.model} at {self.config.provider.shown_url()}"

    def _body(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: str | None,
        overrides: dict[str, Any] | None,
    ) -> dict[str, Any]:
        config = self.config
        body: dict[str, Any] = {
            "model": config.model,
            "messages": messages,
            "stream": config.stream,
        }
        if config.stream:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = tool_choice or "auto"
        if config.temperature is not None:
            body["temperature"] = config.temperature
        if config.max_tokens is not None:
            body["max_tokens"] = config.max_tokens
        return {**body, **config.extra_body, **(overrides or {})}

    def retry_delay(self, fault: RetryableError, try_number: int) -> float:
        provider = self.config.provider
        if fault.retry_after_sec is not None:
            return min(fault.retry_after_sec, provider.max_retry_after_sec)
        return backoff_delay(provider.retry_backoff_sec, try_number)

    def retry_event(self, fault: RetryableError, try_number: int, delay: float) -> Event:
        return Event(
            kind="log",
            role=self.source,
            content=f"{self.who()}: {fault}; retry {try_number} of "
            f"{self.config.provider.max_retries} in {delay:.2f} s",
            data={
                "source": "provider",
                "retry": try_number,
                "status": fault.status,
                "delay_sec": round(delay, 3),
                "infrastructure": True,
            },
        )

    def _pools_here(self) -> _Pools:
        """The connection pools of the running event loop."""
        loop = asyncio.get_running_loop()
        if self._pools is None or self._pools.loop is not loop:
            self._pools = _Pools.open(self.config.provider, self.request_headers(), loop)
        return self._pools

    def request_headers(self) -> dict[str, str]:
        provider = self.config.provider
        try:
            headers = {**provider.headers, **provider.environment_headers()}
        except ProviderConfigError as error:
            raise AttemptFailure(FailureKind.PROVIDER_REJECTED, f"{self.who()}: {error}") from None
        if provider.api_key_env:
            key = os.environ.get(provider.api_key_env)
            if not key:
                raise AttemptFailure(
                    FailureKind.PROVIDER_REJECTED,
                    f"{self.who()}: the environment variable {provider.api_key_env} "
                    "(api_key_env) is not set",
                )
            headers["Authorization"] = f"Bearer {key}"
        return headers

    async def _limited(self, body: dict[str, Any], watch: CallWatch) -> ChatReply:
        """One try, in a request slot, within the try's total deadline."""
        import httpx

        deadline = self.config.provider.request_timeout_sec
        watch.state = "queued"
        async with self._pools_here().lease() as http:
            watch.state = "requesting"
            started, clock = time.time(), time.perf_counter()
            try:
                async with asyncio.timeout(deadline):
                    if body.get("stream"):
                        reply = await self._streamed(http, body, clock, watch)
                    else:
                        reply = await self._whole(http, body)
            except TimeoutError:
                raise RetryableError(
                    f"no complete reply within {deadline:g} s (request_timeout_sec)"
                ) from None
            except httpx.TransportError as error:
                raise RetryableError(transport_message(error)) from None
            except MalformedReply as error:
                raise RetryableError(f"malformed reply: {error}") from None
        watch.progress.set()
        reply.started_at = started
        reply.latency_sec = time.perf_counter() - clock
        return reply

    async def _whole(self, http: httpx.AsyncClient, body: dict[str, Any]) -> ChatReply:
        response = await http.post("chat/completions", json=body)
        raise_for_status(response.status_code, response.headers, response.text, self.who())
        try:
            parsed = response.json()
        except (ValueError, RecursionError):
            excerpt = secrets.scrub(response.text)[:120]
            raise MalformedReply(f"not JSON: {excerpt!r}") from None
        return reply_from_json(self.config.model, parsed)

    async def _streamed(
        self, http: httpx.AsyncClient, body: dict[str, Any], clock: float, watch: CallWatch
    ) -> ChatReply:
        import httpx

        assembler = StreamAssembler(ChatReply(model=self.config.model))
        reply = assembler.reply

        async def sent(event: str, _info: Any) -> None:  # httpcore's trace: the request written
            if event.endswith("send_request_body.complete") and reply.sent_sec is None:
                reply.sent_sec = time.perf_counter() - clock

        trace = {"trace": sent}
        async with http.stream("POST", "chat/completions", json=body, extensions=trace) as response:
            if response.status_code >= 400:
                text = (await response.aread()).decode("utf-8", errors="replace")
                raise_for_status(response.status_code, response.headers, text, self.who())
            try:
                async for line in response.aiter_lines():
                    assembler.got_token = False  # did this line bring tokens? (progress)
                    _read_line(assembler, line, clock)
                    if assembler.got_token:
                        watch.progress.set()
            except httpx.TransportError as error:
                raise RetryableError(
                    f"the stream broke off before the reply was complete (truncated): "
                    f"{transport_message(error)}"
                ) from None
        if not assembler.complete:
            raise RetryableError("the stream ended before the reply was complete (truncated)")
        return assembler.finish()


@dataclass
class _Pools:
    """One event loop's `max_concurrent` request slots, spread over connection pools of at most
    POOL_CONNECTIONS connections each: httpcore's pool does work in proportion to its size on every
    request, so one pool of 200 connections costs far more CPU than seven of 29."""

    loop: asyncio.AbstractEventLoop
    clients: list[httpx.AsyncClient]
    busy: list[int]
    slots: asyncio.Semaphore

    @classmethod
    def open(
        cls, provider: ProviderConfig, headers: dict[str, str], loop: asyncio.AbstractEventLoop
    ) -> _Pools:
        import httpx

        count = math.ceil(provider.max_concurrent / POOL_CONNECTIONS)
        size = math.ceil(provider.max_concurrent / count)
        base_url, params = provider.endpoint()
        clients = [
            httpx.AsyncClient(
                base_url=base_url,
                params=params,
                headers=headers,
                timeout=httpx.Timeout(
                    provider.request_timeout_sec,
                    connect=min(CONNECT_TIMEOUT_SEC, provider.request_timeout_sec),
                ),
                limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
            )
            for _ in range(count)
        ]
        return cls(loop, clients, [0] * count, asyncio.Semaphore(provider.max_concurrent))

    @asynccontextmanager
    async def lease(self) -> AsyncIterator[httpx.AsyncClient]:
        """A request slot on the least busy pool (never over its size: the slots are shared)."""
        async with self.slots:
            index = min(range(len(self.clients)), key=self.busy.__getitem__)
            self.busy[index] += 1
            try:
                yield self.clients[index]
            finally:
                self.busy[index] -= 1

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()


def _read_line(assembler: StreamAssembler, line: str, clock: float) -> None:
    """One line of a server-sent event stream: `data: {chunk}` or `data: [DONE]`."""
    if not line.startswith("data:") or assembler.done:
        return
    payload = line[5:].strip()
    if payload == "[DONE]":
        assembler.done = True
        return
    try:
        assembler.add(json.loads(payload))
    except (json.JSONDecodeError, RecursionError):
        excerpt = secrets.scrub(payload)[:80]
        raise MalformedReply(f"a streamed chunk is not JSON: {excerpt!r}") from None
    if assembler.got_token:
        _time_token(assembler, time.perf_counter() - clock)


def _time_token(assembler: StreamAssembler, elapsed: float) -> None:
    """When a chunk that brought tokens arrived: the first of each kind, and the last."""
    reply = assembler.reply
    if reply.ttft_sec is None:
        reply.ttft_sec = elapsed
    if assembler.got_reasoning and reply.reasoning_ttft_sec is None:
        reply.reasoning_ttft_sec = elapsed
    if assembler.got_content and reply.content_ttft_sec is None:
        reply.content_ttft_sec = elapsed
    reply.last_token_sec = elapsed
    reply.token_chunks += 1


def raise_for_status(status: int, headers: Any, text: str, who: str) -> None:
    """Raise for an HTTP error: retried (408, 409, 425, 429, 5xx) or refused (any other 4xx). The
    body's excerpt is kept, with configured secrets scrubbed (servers echo keys in errors)."""
    if status < 400:
        return
    excerpt = secrets.scrub(" ".join(text.split()))[:ERROR_BODY_CHARS]
    message = f"HTTP {status}" + (f": {excerpt}" if excerpt else "")
    if status in RETRIED_STATUS or status >= 500:
        raise RetryableError(message, status, _retry_after(headers.get("retry-after")))
    raise AttemptFailure(FailureKind.PROVIDER_REJECTED, f"{who} refused the request: {message}")


def _retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


def transport_message(error: Exception) -> str:
    kind = type(error).__name__
    detail = str(error) or "no detail"
    return f"connection error ({kind}: {detail})"
