"""The model bridge: per attempt, benchyard serves an OpenAI-compatible endpoint to the agent and
relays each call to the configured provider with the real key, which never enters the sandbox.

    GET  /v1/models
    POST /v1/chat/completions   (streamed or not, with tool calls)
    POST /v1/responses          (OpenAI Responses API, passed through: bridge/passthrough.py)
    POST /v1/messages           (Anthropic Messages, passed through)

The agent authenticates with a per-attempt token, worthless outside the attempt. Where the
sandbox has a network namespace of its own (bwrap or docker without the network), the bridge
listens on a Unix socket in the attempt's io dir and a relay inside the sandbox
(bridge/relay.py, run by the sandbox's /usr/bin/python3) listens on 127.0.0.1:RELAY_PORT there;
where the agent shares the host's network (`--network all`, `--sandbox none`) the bridge listens
on a free loopback port of the host instead.

Every call is recorded in the attempt's trajectory as the `openai` agent's are (model, the
request's new messages, the reply with its tool calls, tokens, TTFT, latency, cost, finish
reason); a call still in flight when the attempt ends is recorded as cut. Limits hold live: past
`max_turns` model calls, once the attempt's calls have spent its budget of tokens or dollars, or
once the run's spend (bridge/ledger.py) passes the run's `--budget`, the bridge answers an error
and stops the attempt; a provider fault (benchyard's own client's classification, after its
retries) stops it as an uncounted error."""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchyard.bridge import wire
from benchyard.bridge.ledger import RunTab
from benchyard.bridge.passthrough import APIS, KeyScrubber, forward
from benchyard.providers.client import CallWatch, ProviderClient
from benchyard.providers.http_server import ConnectionLimit, LoopbackServer, Request, Responder
from benchyard.providers.replies import ChatReply
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import Event
from benchyard.sandbox.identity import sandbox_user
from benchyard.untrusted import remove_socket, write_fresh

if TYPE_CHECKING:
    import httpx

CHAT = "/chat/completions"
API_NAMES = {CHAT: "chat", **APIS}
SOCKET_NAME = "bridge.sock"
RELAY_NAME = "bridge_relay.py"
RELAY_PORT = 18080  # in the sandbox's own network namespace: no other process listens there
RELAY_PYTHON = "/usr/bin/python3"  # the sandbox's system interpreter
MAX_CONNECTIONS = 32
SOURCE = "bridge"
TOKEN_PREFIX = "benchyard-bridge-"


@dataclass
class Bridge:
    """One attempt's bridge: its calls, and why it stopped the attempt (`failure`)."""

    client: ProviderClient
    trajectory: list[Event]
    max_calls: int
    max_tokens: int | None = None  # the attempt's budget: prompt and completion tokens of its calls
    max_cost_usd: float | None = None  # and their cost
    run_spend: RunTab | None = None  # the run's spend, under its --budget, shared by its attempts
    token: str = field(default_factory=lambda: TOKEN_PREFIX + secrets.token_hex(16))
    calls: int = 0
    tokens_spent: int = 0
    cost_spent_usd: float = 0.0
    failure: AttemptFailure | None = None
    stopped: asyncio.Event = field(default_factory=asyncio.Event)
    http: httpx.AsyncClient | None = None
    watches: list[CallWatch] = field(default_factory=list)  # the chat calls in flight
    _messages_seen: int = 0

    async def handle(self, request: Request, respond: Responder) -> None:
        path = request.path.split("?", 1)[0].rstrip("/").removeprefix("/v1")
        if not self._authorized(request.headers):
            await respond.send(401, wire.error_body("not this attempt's bridge token", "auth"))
        elif request.method == "GET" and path == "/models":
            await respond.send(200, wire.models(self.client.config.model))
        elif request.method == "POST" and path in (CHAT, *APIS):
            await self._call(path, request, respond)
        else:
            message = f"the model bridge has no route {request.method} {request.path}"
            await respond.send(404, wire.error_body(message, "not_found"))

    def _authorized(self, headers: dict[str, str]) -> bool:
        given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
        return hmac.compare_digest(given.strip().encode(), self.token.encode())

    async def _call(self, path: str, request: Request, respond: Responder) -> None:
        """One model call: refused past a limit, else relayed and recorded, and answered (the
        pass-through APIs answer as they relay)."""
        body, conversation = _read_request(path, request)
        if body is None:
            message = f"expected a JSON object with {conversation} (a {path[1:]} request)"
            await respond.send(400, wire.error_body(message, "invalid_request"))
            return
        refusal = self._refusal()
        if refusal is not None:
            await respond.send(429, wire.error_body(refusal, "benchyard_limit"))
            return
        self.calls += 1
        number, new = self.calls, self._new_messages(conversation)
        try:
            if path == CHAT:
                watch = CallWatch()
                self.watches.append(watch)
                try:
                    sent = self._provider_body(body)
                    reply = await self.client.complete(sent, self.trajectory, watch)
                finally:
                    self.watches.remove(watch)
            else:
                reply = await forward(self.client, self._http(), path, request, respond)
        except AttemptFailure as failure:
            self.trajectory.append(self._note("error", f"model call {number} failed: {failure}"))
            self._stop(failure)
            if respond.keep_alive:  # else the reply was cut off half-way
                await respond.send(502, wire.error_body(failure.message, "provider_error"))
            return
        except asyncio.CancelledError:
            cut = f"model call {number} cut: the attempt ended while it was in flight"
            self.trajectory.append(self._note("error", cut, cut=True))
            raise
        event = reply.to_event()  # a model call benchyard observed, as the openai agent's are
        assert event.data is not None
        event.data.update(via=SOURCE, call=number, api=API_NAMES[path], request_messages=new)
        self.trajectory.append(event)
        over = self._spend(reply)
        if over is not None:
            self._stop(over)
            if path == CHAT:  # a pass-through reply has already gone to the agent as it came
                await respond.send(429, wire.error_body(over.message, "benchyard_limit"))
        elif path == CHAT:
            secrets_sent = self.client.config.provider.secret_values()
            await _answer_chat(
                body, reply, respond, f"chatcmpl-{number}", KeyScrubber(secrets_sent)
            )

    def provider_fault_at_deadline(self, timeout_sec: float) -> AttemptFailure | None:
        """When the attempt's time ran out while a call of its was waiting on the provider (to
        retry after a fault, or for a request slot), the provider's fault, as for the `openai`
        agent: an uncounted error, not the agent's timeout."""
        for watch in self.watches:
            if watch.state == "backoff":
                return AttemptFailure(
                    FailureKind.PROVIDER_UNAVAILABLE,
                    f"the provider was failing when the attempt's {timeout_sec:g} s ran out: "
                    f"{watch.last_fault}",
                )
            if watch.state == "queued":
                return AttemptFailure(
                    FailureKind.PROVIDER_UNAVAILABLE,
                    "still waiting for a request slot of the provider (max_concurrent) when the "
                    f"attempt's {timeout_sec:g} s ran out",
                )
        return None

    def _new_messages(self, conversation: list[Any]) -> list[Any]:
        """The messages of a request not in the previous one's (all of them when it is shorter)."""
        new = conversation[self._messages_seen :] or conversation
        self._messages_seen = len(conversation)
        return new

    def _http(self) -> httpx.AsyncClient:
        """The pass-through's connections to the provider, for this attempt."""
        import httpx

        if self.http is None:
            self.http = httpx.AsyncClient(timeout=self.client.config.provider.request_timeout_sec)
        return self.http

    def _refusal(self) -> str | None:
        """Why no more calls are relayed: the attempt already stopped, or this call would go past
        max_turns (which stops it)."""
        if self.failure is not None:
            return f"the model bridge stopped this attempt: {self.failure.message}"
        if self.run_spend is not None and self.run_spend.exhausted():
            failure = self._run_budget_failure(self.run_spend.spent_usd())
            self._stop(failure)
            return failure.message
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

    def _spend(self, reply: ChatReply) -> AttemptFailure | None:
        """Count a call's tokens and cost against the attempt's budget and the run's; the failure
        that stops the attempt once either is passed, else None."""
        self.tokens_spent += (reply.tokens_in or 0) + (reply.tokens_out or 0)
        self.cost_spent_usd += reply.cost_usd or 0.0
        run_spent = self.run_spend.charge(reply.cost_usd or 0.0) if self.run_spend else 0.0
        if self.max_tokens is not None and self.tokens_spent > self.max_tokens:
            spent = f"{self.tokens_spent} tokens, past its budget of {self.max_tokens}"
        elif self.max_cost_usd is not None and self.cost_spent_usd > self.max_cost_usd:
            spent = f"${self.cost_spent_usd:.4f}, past its budget of ${self.max_cost_usd:g}"
        elif self.run_spend is not None and self.run_spend.passed(run_spent):
            return self._run_budget_failure(run_spent)
        else:
            return None
        return AttemptFailure(
            FailureKind.ATTEMPT_BUDGET,
            f"the attempt's {self.calls} model calls spent {spent} (attempt_budget): stopped "
            "live by the model bridge",
        )

    def _run_budget_failure(self, run_spent_usd: float) -> AttemptFailure:
        assert self.run_spend is not None and self.run_spend.budget_usd is not None
        return AttemptFailure(
            FailureKind.RUN_BUDGET,
            f"the run's budget was reached: --budget ${self.run_spend.budget_usd:g}, "
            f"${run_spent_usd:.4f} spent by the run after this attempt's {self.calls} model "
            "calls; stopped live by the model bridge",
        )

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


def _read_request(path: str, request: Request) -> tuple[Any, Any]:
    """The request's body and its conversation (chat `messages`, Messages `messages`, Responses
    `input`, a text input as one message); (None, what was expected) when it is not one."""
    key = "input" if path == "/responses" else "messages"
    try:
        body = request.json()
    except ValueError:
        body = None
    conversation = body.get(key) if isinstance(body, dict) else None
    if isinstance(conversation, str):
        conversation = [{"role": "user", "content": conversation}]
    if not isinstance(conversation, list):
        return None, f'"{key}"'
    return body, conversation


async def _answer_chat(
    body: dict[str, Any], reply: ChatReply, respond: Responder, call_id: str, scrubber: KeyScrubber
) -> None:
    """A chat completion, under the model name the agent asked for, streamed if it asked; the
    provider's secrets scrubbed (a server that echoes a request's headers would give the key)."""
    model = str(body.get("model") or reply.model)
    if body.get("stream"):
        await respond.start(200, {"Content-Type": "text/event-stream"})
        for event in wire.stream_events(reply, model, call_id):
            await respond.chunk(scrubber.scrub(event))
        await respond.end()
    else:
        whole = json.dumps(wire.completion(reply, model, call_id)).encode()
        await respond.send(200, scrubber.scrub(whole), {"Content-Type": "application/json"})


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
        if bridge.http is not None:
            await bridge.http.aclose()
        remove_socket(socket_path)


async def _listen_relayed(
    server: LoopbackServer, socket_path: Path, io_dir: Path
) -> tuple[str, ...]:
    await server.listen_unix(socket_path)
    sandbox_user().hand_socket(socket_path)
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
