"""The `openai` agent: a model behind an OpenAI-compatible endpoint, driven by benchyard's own
tool-calling loop. Each user turn is sent with the conversation so far and the scenario's tools;
tool calls are answered from the scenario's fixtures until the model answers or max_turns is
reached. An answer lost to reasoning (empty, the token budget spent thinking) is retried once with
reasoning lowered, and recorded as such."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

from pydantic import Field

from benchyard.agents.base import AgentResult, AgentTask
from benchyard.agents.toolbox import ToolBox
from benchyard.providers.client import ProviderClient
from benchyard.providers.config import ModelConfig
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
        return self.config.model_dump(mode="json")

    async def run(self, task: AgentTask) -> AgentResult:
        result = AgentResult()
        try:
            async with asyncio.timeout(task.timeout_sec):
                await _Loop(self, task, result).run()
        except TimeoutError:
            raise AttemptFailure(
                FailureKind.AGENT_TIMEOUT, f"no answer within {task.timeout_sec:g} s", result
            ) from None
        except AttemptFailure as failure:
            failure.partial = failure.partial or result
            raise
        return result

    async def aclose(self) -> None:
        await self.client.aclose()


class _Loop:
    """One attempt's conversation: the messages sent so far and the tools answered."""

    def __init__(self, agent: OpenAIAgent, task: AgentTask, result: AgentResult) -> None:
        self.config = agent.config
        self.client = agent.client
        self.task = task
        self.result = result
        self.toolbox = ToolBox(task.scenario.tools, result.trajectory)
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
                return reply.content.strip()
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
