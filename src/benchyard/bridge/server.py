"""The model bridge: per attempt, benchyard serves an OpenAI-compatible endpoint to the agent and
relays each call to the configured provider with the real key, which never enters the sandbox.

    GET  /v1/models
    POST /v1/chat/completions   (streamed or not, with tool calls)

The agent authenticates with a per-attempt token, worthless outside the attempt. Where the
sandbox has a network namespace of its own (bwrap or docker without the network), the bridge
listens on a Unix socket in the attempt's io dir and a relay inside the sandbox
(bridge/relay.py, run by the sandbox's /usr/bin/python3) listens on 127.0.0.1:RELAY_PORT there;
where the agent shares the host's network (`--network all`, `--sandbox none`) the bridge listens
on a free loopback port of the host instead.

Every call is recorded in the attempt's trajectory as the `openai` agent's are (model, the
request's new messages, the reply with its tool calls, tokens, TTFT, latency, cost, finish
reason); a call still in flight when the attempt ends is recorded as cut. Limits hold live: past
`max_turns` model calls the bridge answers an error and stops the attempt; a provider fault
(benchyard's own client's classification, after its retries) stops it as an uncounted error."""

from __future__ import annotations

import asyncio
import hmac
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchyard.agents.tool_server import let_the_sandbox_connect
from benchyard.bridge import wire
from benchyard.providers.client import CallWatch, ProviderClient
from benchyard.providers.http_server import ConnectionLimit, LoopbackServer, Request, Responder
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import Event
from benchyard.untrusted import write_fresh

SOCKET_NAME = "bridge.sock"
RELAY_NAME = "bridge_relay.py"
RELAY_PORT = 18080  # in the sandbox's own network namespace: no other process listens there
RELAY_PYTHON = "/usr/bin/python3"  # the sandbox's system interpreter
MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes
MAX_CONNECTIONS = 32
SOURCE = "bridge"
TOKEN_PREFIX = "benchyard-bridge-"


@dataclass
class Bridge:
    """One attempt's bridge: its calls, and why it stopped the attempt (`failure`)."""

    client: ProviderClient
    trajectory: list[Event]
    max_calls: int
    token: str = field(default_factory=lambda: TOKEN_PREFIX + secrets.token_hex(16))
    calls: int = 0
    failure: AttemptFailure | None = None
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    _messages_seen: int = 0

    async def handle(self, request: Request, respond: Responder) -> None:
        path = request.path.split("?", 1)[0].rstrip("/").removeprefix("/v1")
        if not self._authorized(request.headers):
            await respond.send(401, wire.error_body("not this attempt's bridge token", "auth"))
        elif request.method == "GET" and path == "/models":
            await respond.send(200, wire.models(self.client.config.model))
        elif request.method == "POST" and path == "/chat/completions":
            await self._chat(request, respond)
        else:
            message = f"the model bridge has no route {request.method} {request.path}"
            await respond.send(404, wire.error_body(message, "not_found"))

    def _authorized(self, headers: dict[str, str]) -> bool:
        given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        return hmac.compare_digest(given.strip().encode(), self.token.encode())

    async def _chat(self, request: Request, respond: Responder) -> None:
        try:
            body = request.json()
        except ValueError as error:
            body = str(error)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            message = 'expected a JSON object with "messages" (a chat completion request)'
            await respond.send(400, wire.error_body(message, "invalid_request"))
            return
        refusal = self._refusal()
        if refusal is not None:
            await respond.send(429, wire.error_body(refusal, "benchyard_limit"))
            return
        self.calls += 1
        reply = await self._relay(body, self.calls)
        if reply is None:
            assert self.failure is not None
            await respond.send(502, wire.error_body(self.failure.message, "provider_error"))
            return
        model, call_id = (
            str(body.get("model") or self.client.config.model),
            f"chatcmpl-{self.calls}",
        )
        if body.get("stream"):
            await respond.start(200, {"Content-Type": "text/event-stream"})
            for event in wire.stream_events(reply, model, call_id):
                await respond.chunk(event)
            await respond.end()
        else:
            await respond.send(200, wire.completion(reply, model, call_id))

    def _refusal(self) -> str | None:
        """Why no more calls are relayed: the attempt already stopped, or this call would go past
        max_turns (which stops it)."""
        if self.failure is not None:
            return f"the model bridge stopped this attempt: {self.failure.message}"
        if self.calls < self.max_calls:
            return None
        self._stop(
            AttemptFailure(
                FailureKind.MAX_TURNS,
                f"the agent asked for a model call past max_turns ({self.max_calls}): stopped "
                "live by the model bridge",
            )
        )
        return f"max_turns ({self.max_calls} model calls) reached: no more calls in this attempt"

    async def _relay(self, body: dict[str, Any], number: int) -> Any:
        """The provider's reply to the agent's request, recorded; None when the provider failed
        (the attempt is then stopped with its fault)."""
        request_messages = body["messages"][self._messages_seen :] or body["messages"]
        self._messages_seen = len(body["messages"])
        try:
            reply = await self.client.complete(
                self._provider_body(body), self.trajectory, CallWatch()
            )
        except AttemptFailure as failure:
            self.trajectory.append(self._note("error", f"model call {number} failed: {failure}"))
            self._stop(failure)
            return None
        except asyncio.CancelledError:
            self.trajectory.append(
                self._note(
                    "error",
                    f"model call {number} cut: the attempt ended while it was in flight",
                    cut=True,
                )
            )
            raise
        event = reply.to_event(source=SOURCE)
        assert event.data is not None
        event.data.update(call=number, request_messages=request_messages)
        self.trajectory.append(event)
        return reply

    def _provider_body(self, body: dict[str, Any]) -> dict[str, Any]:
        """The agent's request as the provider gets it: the configured model and request settings;
        streamed when the model is (so that its TTFT is measured) whatever the agent asked."""
        config = self.client.config
        sent = {**body, **config.extra_body, "model": config.model, "stream": config.stream}
        sent.pop("stream_options", None)
        if config.stream:
            sent["stream_options"] = {"include_usage": True}
        if config.temperature is not None:
            sent["temperature"] = config.temperature
        if config.max_tokens is not None:
            sent["max_tokens"] = config.max_tokens
        return sent

    def _note(self, kind: str, content: str, **data: Any) -> Event:
        return Event(kind=kind, content=content, data={"source": SOURCE, **data})

    def _stop(self, failure: AttemptFailure) -> None:
        if self.failure is None:
            self.failure = failure
            self.stopped.set()


@dataclass
class BridgeSession:
    """A served bridge: the variables the agent gets, and how its command is started."""

    bridge: Bridge
    env: dict[str, str]
    relay: tuple[str, ...] = ()  # the command prefix that runs the relay; () for none

    def wrap(self, argv: list[str]) -> list[str]:
        return [*self.relay, *argv]


@asynccontextmanager
async def serve_bridge(
    bridge: Bridge, io_dir: Path, *, own_network: bool
) -> AsyncIterator[BridgeSession]:
    """Serve `bridge` while the block runs: on a Unix socket in `io_dir` relayed inside the
    sandbox when it has a network namespace of its own (`own_network`), else on a free loopback
    port of the host. AttemptFailure(SANDBOX_START) when the socket's path is too long."""
    server = LoopbackServer(bridge.handle, limit=ConnectionLimit(MAX_CONNECTIONS))
    socket_path = io_dir / SOCKET_NAME
    try:
        if own_network:
            relay = await _listen_relayed(server, socket_path, io_dir)
            base, prefix = f"http://127.0.0.1:{RELAY_PORT}", relay
        else:
            base, prefix = f"http://127.0.0.1:{await server.listen_tcp()}", ()
        yield BridgeSession(bridge, _environment(base, bridge.token), prefix)
    finally:
        await server.close()
        socket_path.unlink(missing_ok=True)


async def _listen_relayed(
    server: LoopbackServer, socket_path: Path, io_dir: Path
) -> tuple[str, ...]:
    if len(str(socket_path)) > MAX_SOCKET_PATH:
        raise AttemptFailure(
            FailureKind.SANDBOX_START,
            f"the model bridge's socket path {socket_path} is {len(str(socket_path))} bytes, over "
            f"the {MAX_SOCKET_PATH} a Unix socket's path can hold: give a shorter --work-root",
        )
    await server.listen_unix(socket_path)
    let_the_sandbox_connect(socket_path)
    relay = io_dir / RELAY_NAME
    write_fresh(relay, (Path(__file__).parent / "relay.py").read_bytes())
    return (RELAY_PYTHON, str(relay), str(socket_path), str(RELAY_PORT), "--")


def _environment(base: str, token: str) -> dict[str, str]:
    """The variables OpenAI- and Anthropic-style clients read, all naming the bridge."""
    return {
        "OPENAI_BASE_URL": f"{base}/v1",
        "OPENAI_API_BASE": f"{base}/v1",
        "OPENAI_API_KEY": token,
        "ANTHROPIC_BASE_URL": base,
        "ANTHROPIC_API_KEY": token,
        "BENCHYARD_BRIDGE_URL": f"{base}/v1",
    }
