"""The `openai` agent: a model behind an OpenAI-compatible endpoint, driven by benchyard's own
tool-calling loop. Each user turn is sent with the conversation so far and the scenario's tools;
tool calls are answered from the scenario's fixtures until the model answers or max_turns is
reached. An answer lost to reasoning (empty, the token budget spent thinking) is retried once with
reasoning lowered, and recorded as such.

The attempt's timeout is the model's time, not the provider's: when it runs out during a model
call, the call shows which it was. Tokens (or a reply) arriving after the deadline: the model was
working, the attempt is a timeout. The try failing instead (its own deadline, request_timeout_sec,
passed; the connection broke), or the call waiting for a retry or a request slot: the provider was
unavailable, an error that is not counted against the agent."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Literal, NoReturn

from pydantic import Field

from benchyard.agents.base import AgentResult, AgentTask
from benchyard.agents.toolbox import ToolBox
from benchyard.providers.client import CallWatch, ProviderClient
from benchyard.providers.config import ModelConfig, redacted_model_config
from benchyard.providers.replies import ChatReply
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import Event, message


class OpenAIAgentConfig(ModelConfig):
    kind: Literal["openai"] = "openai"
    tool_choice: str = Field(default="auto", description="auto, required or none.")
    system_prompt: str | None = Field(
        default=None, description="A system prompt for scenarios that bring none."
    )


class OpenAIAgent:
    needs_workdir = False

    def __init__(self, name: str, config: OpenAIAgentConfig) -> None:
        self.name = name
        self.config = config
        self.client = ProviderClient(config)

    def describe(self) -> dict[str, Any]:
        """The configuration a run records: credential headers redacted, keys only by name."""
        return redacted_model_config(self.config.model_dump(mode="json"))

    async def run(self, task: AgentTask) -> AgentResult:
        result = AgentResult()
        watch = CallWatch()
        work = asyncio.ensure_future(_Loop(self, task, result, watch).run())
        try:
            done, _ = await asyncio.wait({work}, timeout=task.timeout_sec)
            if not done:
                grace = self.config.provider.request_timeout_sec
                await _overtime(work, watch, task.timeout_sec, grace)
            work.result()
        except AttemptFailure as failure:
            failure.partial = failure.partial or result
            raise
        finally:
            await _cancelled(work)
        return result

    async def aclose(self) -> None:
        await self.client.aclose()


async def _overtime(
    work: asyncio.Future[None], watch: CallWatch, timeout_sec: float, grace_sec: float
) -> NoReturn:
    """The attempt's time ran out during `work`: raise the timeout, or the provider's fault when the
    model call in progress shows the provider was the one not answering (see the module's
    docstring)."""
    watch.overtime = True
    if watch.state == "requesting":
        await _grace(work, watch, timeout_sec, grace_sec)
    elif watch.state == "backoff":
        raise AttemptFailure(
            FailureKind.PROVIDER_UNAVAILABLE,
            f"the provider was failing when the attempt's {timeout_sec:g} s ran out: "
            f"{watch.last_fault}",
        )
    elif watch.state == "queued":
        raise AttemptFailure(
            FailureKind.PROVIDER_UNAVAILABLE,
            f"still waiting for a request slot of the provider (max_concurrent) when the "
            f"attempt's {timeout_sec:g} s ran out",
        )
    raise AttemptFailure(FailureKind.AGENT_TIMEOUT, f"no answer within {timeout_sec:g} s")


async def _grace(
    work: asyncio.Future[None], watch: CallWatch, timeout_sec: float, grace_sec: float
) -> None:
    """Wait for the try in flight to show whose the lost time is: return once tokens (or a reply)
    arrive; raise the provider's fault when the try fails (it is not retried any more) or sends
    nothing within `grace_sec` (its own deadline, should the client not enforce it)."""
    watch.progress.clear()
    progress: asyncio.Future[Any] = asyncio.ensure_future(watch.progress.wait())
    try:
        await asyncio.wait({work, progress}, timeout=grace_sec, return_when=asyncio.FIRST_COMPLETED)
        progressed = progress.done()
    finally:
        await _cancelled(progress)
    if not work.done() and not progressed:
        raise AttemptFailure(
            FailureKind.PROVIDER_UNAVAILABLE,
            f"the provider sent nothing in the {grace_sec:g} s (request_timeout_sec) after the "
            f"attempt's {timeout_sec:g} s ran out",
        )
    failure = work.exception() if work.done() and not work.cancelled() else None
    if isinstance(failure, AttemptFailure) and not failure.policy.counts:
        raise failure


async def _cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel `task` unless it is done, and wait for it to end (its outcome is then read)."""
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task


class _Loop:
    """One attempt's conversation: the messages sent so far and the tools answered."""

    def __init__(
        self, agent: OpenAIAgent, task: AgentTask, result: AgentResult, watch: CallWatch
    ) -> None:
        self.config = agent.config
        self.client = agent.client
        self.task = task
        self.result = result
        self.watch = watch
        self.toolbox = ToolBox.for_scenario(task.scenario, result.trajectory)
        self.tools = self.toolbox.definitions() or None
        system = task.scenario.stimulus.system or self.config.system_prompt
        self.messages: list[dict[str, Any]] = (
            [{"role": "system", "content": system}] if system else []
        )

    async def run(self) -> None:
        for turn, user_text in enumerate(self.task.scenario.stimulus.turns, start=1):
            self.toolbox.turn = turn
            self.messages.append({"role": "user", "content": user_text})
            self.result.trajectory.append(message("user", user_text))
            self.result.answers.append(await self._answer_turn())

    async def _answer_turn(self) -> str:
        """Call the model, answering its tool calls, until it gives an answer."""
        while True:
            if self.result.turns >= self.task.max_turns:
                raise AttemptFailure(
                    FailureKind.MAX_TURNS,
                    f"no answer after {self.result.turns} model calls (max_turns "
                    f"{self.task.max_turns})",
                    self.result,
                )
            reply = await self._call()
            self.result.turns += 1
            self.messages.append(reply.as_message())
            if not reply.tool_calls:
                return reply.content  # as the model gave it: graders see it whole
            for call in reply.tool_calls:
                answer = self.toolbox.call(call.name, call.arguments)
                self.messages.append(
                    {"role": "tool", "tool_call_id": call.call_id, "content": answer.text}
                )

    async def _call(self, overrides: dict[str, Any] | None = None) -> ChatReply:
        reply = await self.client.chat(
            self.messages,
            self.result.trajectory,
            tools=self.tools,
            tool_choice=self.config.tool_choice,
            overrides=overrides,
            watch=self.watch,
        )
        self.result.trajectory.append(reply.to_event())
        if reply.lost_to_reasoning and overrides is None:
            return await self._recover(reply)
        return reply

    async def _recover(self, lost: ChatReply) -> ChatReply:
        """One retry with reasoning lowered, where the endpoint allows it."""
        budget = self.config.max_tokens or "the endpoint's default"
        spent = (
            f"{lost.reasoning_tokens} reasoning tokens"
            if lost.reasoning_tokens
            else f"{len(lost.reasoning)} characters of reasoning"
        )
        note = f"empty answer: the token budget ({budget}) went to reasoning ({spent})"
        fallback = self.config.reasoning_fallback
        if not fallback:
            raise AttemptFailure(
                FailureKind.REASONING_TRUNCATED, f"{note}; no reasoning_fallback to retry with"
            )
        shown = json.dumps(fallback, sort_keys=True)
        self.result.trajectory.append(
            Event(
                kind="log",
                content=f"{note}; retrying once with {shown}",
                data={"source": "harness", "reasoning_truncated": True},
            )
        )
        try:
            reply = await self._call(overrides=fallback)
        except AttemptFailure as failure:
            if failure.kind != FailureKind.PROVIDER_REJECTED:
                raise
            raise AttemptFailure(
                FailureKind.REASONING_TRUNCATED,
                f"{note}; the endpoint refused the retry with {shown}: {failure.message}",
            ) from None
        if reply.lost_to_reasoning:
            raise AttemptFailure(
                FailureKind.REASONING_TRUNCATED, f"{note}; still empty after a retry with {shown}"
            )
        return reply
