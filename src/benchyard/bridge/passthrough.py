"""The bridge's pass-through of the OpenAI Responses API (`POST /v1/responses`) and Anthropic
Messages (`POST /v1/messages`): the agent's request goes to the same path of the provider with the
bridge's model and the real key; the reply comes back to the agent as the provider sent it,
streamed as it arrives. What can be read of it is recorded (text, tool calls, tokens, TTFT,
latency, cost); faults are classified by benchyard's own client (providers/client.py): 429 and 5xx
and connection errors are retried while nothing has reached the agent, then stop the attempt as
the provider's fault."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchyard.providers.client import RetryableError, raise_for_status, transport_message
from benchyard.providers.replies import ChatReply, ModelToolCall
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import believable_count
from benchyard.secrets import REDACTED as REDACTED_TEXT

if TYPE_CHECKING:
    import httpx

    from benchyard.providers.client import ProviderClient
    from benchyard.providers.http_server import Request, Responder

APIS = {"/responses": "responses", "/messages": "messages"}
FORWARDED = ("content-type", "accept", "anthropic-version", "anthropic-beta", "openai-beta")
PARSE_CAP_BYTES = 16 * 1024 * 1024  # of a reply, read for the record (the agent gets it all)
REDACTED = REDACTED_TEXT.encode()


@dataclass
class Forwarded:
    """One pass-through call: the reply as far as it was read, and whether the agent got any."""

    reply: ChatReply
    answered: bool = False  # has any byte of the reply reached the agent?
    body: bytearray = field(default_factory=bytearray)


async def forward(
    client: ProviderClient,
    http: httpx.AsyncClient,
    path: str,
    request: Request,
    respond: Responder,
) -> ChatReply:
    """Relay one call, retried on the provider's faults while the agent has had nothing; the
    reply as read. AttemptFailure (the provider's) when it stays unavailable or refuses."""
    provider = client.config.provider
    for try_number in range(1, provider.max_retries + 2):
        call = Forwarded(ChatReply(model=client.config.model))
        try:
            await _try(client, http, path, request, respond, call)
        except RetryableError as fault:
            fault.scrub()
            if call.answered or try_number > provider.max_retries:
                if call.answered:
                    respond.cut()  # the agent sees its reply end early, as the provider's did
                why = "the reply was cut off" if call.answered else "retries spent"
                raise AttemptFailure(
                    FailureKind.PROVIDER_UNAVAILABLE, f"{client.who()}: {fault} ({why})"
                ) from None
            await asyncio.sleep(client.retry_delay(fault, try_number))
            continue
        read_reply(APIS[path], bytes(call.body), call.reply)
        if client.config.price is not None:
            call.reply.cost_usd = client.config.price.cost_usd(
                call.reply.tokens_in, call.reply.tokens_out
            )
        return call.reply
    raise AssertionError("unreachable")  # pragma: no cover


async def _try(
    client: ProviderClient,
    http: httpx.AsyncClient,
    path: str,
    request: Request,
    respond: Responder,
    call: Forwarded,
) -> None:
    import httpx

    body = {**request.json(), "model": client.config.model}
    headers = {name: request.headers[name] for name in FORWARDED if name in request.headers}
    headers.update(client.request_headers())
    key = headers.get("Authorization", "").removeprefix("Bearer ")
    if key and APIS[path] == "messages":
        headers["x-api-key"] = key
    url = client.config.provider.url_for(path)
    started, clock = time.time(), time.perf_counter()
    try:
        async with (
            asyncio.timeout(client.config.provider.request_timeout_sec),
            http.stream("POST", url, json=body, headers=headers) as response,
        ):
            if response.status_code >= 400:
                text = (await response.aread()).decode("utf-8", errors="replace")
                raise_for_status(response.status_code, response.headers, text, client.who())
            kind = response.headers.get("content-type", "application/json")
            await respond.start(response.status_code, {"Content-Type": kind})
            scrubber = KeyScrubber(client.config.provider.secret_values())
            async for data in response.aiter_bytes():  # decoded: no encoding passed on
                if call.reply.ttft_sec is None:
                    call.reply.ttft_sec = time.perf_counter() - clock
                call.answered = True
                await _pass_on(scrubber.feed(data), respond, call)
            await _pass_on(scrubber.flush(), respond, call)
            await respond.end()
    except TimeoutError:
        raise RetryableError("no complete reply within the request_timeout_sec") from None
    except httpx.TransportError as error:
        raise RetryableError(transport_message(error)) from None
    call.reply.started_at = started
    call.reply.latency_sec = time.perf_counter() - clock
    if not body.get("stream"):
        call.reply.ttft_sec = None  # a whole reply: no first token to time


async def _pass_on(data: bytes, respond: Responder, call: Forwarded) -> None:
    await respond.chunk(data)
    if len(call.body) < PARSE_CAP_BYTES:
        call.body += data


class KeyScrubber:
    """The provider's secrets replaced in a reply passed through in pieces (a server that echoes
    a request's headers would hand the agent the key): the last bytes of each piece, which could
    begin a secret, are held back until the next."""

    def __init__(self, secrets: list[str | None]) -> None:
        self.secrets = [secret.encode() for secret in secrets if secret]
        self.keep = max((len(secret) for secret in self.secrets), default=1) - 1
        self.held = b""

    def feed(self, data: bytes) -> bytes:
        data = self.scrub(self.held + data)
        cut = max(len(data) - self.keep, 0)
        self.held = data[cut:]
        return data[:cut]

    def flush(self) -> bytes:
        data, self.held = self.held, b""
        return data

    def scrub(self, data: bytes) -> bytes:
        for secret in self.secrets:
            data = data.replace(secret, REDACTED)
        return data


def read_reply(api: str, data: bytes, reply: ChatReply) -> None:
    """What the record keeps of a reply: a whole JSON document, or the events of a stream."""
    text = data.decode("utf-8", errors="replace")
    documents: list[Any] = []
    if text.lstrip().startswith("{"):
        documents = [_json(text)]
    else:
        for line in text.splitlines():
            if line.startswith("data:"):
                documents.append(_json(line[5:].strip()))
    for document in documents:
        if isinstance(document, dict):
            (_read_response if api == "responses" else _read_message)(document, reply)


def _read_response(document: dict[str, Any], reply: ChatReply) -> None:
    """A Responses API object, or a stream event carrying one (`response.completed`)."""
    response = document.get("response", document)
    if not isinstance(response, dict) or not isinstance(response.get("output"), list):
        return
    reply.content, reply.tool_calls = "", []
    for item in response["output"]:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            call_id = str(item.get("call_id") or item.get("id") or "")
            arguments = item.get("arguments")
            arguments = arguments if isinstance(arguments, str) else json.dumps(arguments)
            reply.tool_calls.append(ModelToolCall(call_id, str(item.get("name") or ""), arguments))
        for part in item.get("content") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                reply.content += part["text"]
    reply.finish_reason = str(response.get("status") or "") or None
    _usage(reply, response.get("usage"))


def _read_message(document: dict[str, Any], reply: ChatReply) -> None:
    """An Anthropic message, or a stream event (`message_start`, `content_block_*`,
    `message_delta`)."""
    message = document.get("message", document)
    if isinstance(message, dict) and isinstance(message.get("content"), list):
        for block in message["content"]:
            _read_block(block, reply)
        _usage(reply, message.get("usage"))
    if document.get("type") == "content_block_start":
        _read_block(document.get("content_block"), reply)
    delta = document.get("delta")
    if isinstance(delta, dict):
        if isinstance(delta.get("text"), str):
            reply.content += delta["text"]
        if isinstance(delta.get("partial_json"), str) and reply.tool_calls:
            reply.tool_calls[-1].arguments += delta["partial_json"]
        if delta.get("stop_reason"):
            reply.finish_reason = str(delta["stop_reason"])
    if isinstance(message, dict) and message.get("stop_reason"):
        reply.finish_reason = str(message["stop_reason"])
    _usage(reply, document.get("usage"))


def _read_block(block: Any, reply: ChatReply) -> None:
    if not isinstance(block, dict):
        return
    if block.get("type") == "text" and isinstance(block.get("text"), str):
        reply.content += block["text"]
    elif block.get("type") == "tool_use":
        given = block.get("input")
        arguments = json.dumps(given) if given else ""
        name = str(block.get("name") or "")
        reply.tool_calls.append(ModelToolCall(str(block.get("id") or ""), name, arguments))


def _usage(reply: ChatReply, usage: Any) -> None:
    """Anthropic's and the Responses API's usage: input and output tokens (a later count of either
    replaces an earlier one; a zero placeholder never replaces a count)."""
    if not isinstance(usage, dict):
        return
    for key, attribute in (("input_tokens", "tokens_in"), ("output_tokens", "tokens_out")):
        counted = believable_count(usage.get(key))
        if counted:
            setattr(reply, attribute, counted)
        elif counted == 0 and getattr(reply, attribute) is None:
            setattr(reply, attribute, 0)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
