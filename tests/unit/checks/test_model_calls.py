"""`latency`, `cost` and `finish_reason` on trajectories as the openai agent records them
(ChatReply.to_event), with a judge's call and a command agent's own lines beside them."""

from __future__ import annotations

from typing import Any

import pytest

from benchyard.checks.base import CheckResult, Evidence
from benchyard.providers.replies import ChatReply
from benchyard.runner.trajectory import JUDGE_SOURCE, Event, message
from benchyard.spec.models import Scenario

from .helpers import check_type, params_error

SCENARIO = Scenario.model_validate(
    {"id": "s", "stimulus": "q", "checks": [{"type": "equals", "value": "x"}]}
)


def reply(
    latency: float,
    ttft: float | None = None,
    cost: float | None = None,
    finish: str | None = "stop",
    tokens: tuple[int, int] = (10, 5),
) -> Event:
    """A model call's event, as benchyard's provider client records it."""
    return ChatReply(
        model="m",
        content="answer",
        finish_reason=finish,
        tokens_in=tokens[0],
        tokens_out=tokens[1],
        latency_sec=latency,
        ttft_sec=ttft,
        cost_usd=cost,
    ).to_event()


def judge_call(latency: float, cost: float) -> Event:
    return ChatReply(
        model="judge", content="{}", latency_sec=latency, cost_usd=cost, finish_reason="length"
    ).to_event(role=JUDGE_SOURCE, source=JUDGE_SOURCE)


def agent_line(cost: float | None = None, tokens_in: int | None = None) -> Event:
    """A line a command agent wrote in its own trajectory file."""
    return Event(
        kind="message",
        role="assistant",
        content="thinking",
        cost_usd=cost,
        tokens_in=tokens_in,
        data={"source": "agent"},
    )


def check(name: str, events: list[Event], **params: Any) -> CheckResult:
    kind = check_type(name)
    trajectory = [message("user", "q"), *events]
    result = kind.evaluate(
        kind.params.model_validate(params), Evidence("answer", SCENARIO, trajectory=trajectory)
    )
    assert isinstance(result, CheckResult)
    return result


# --- latency -----------------------------------------------------------------------------------


def test_latency_within_every_limit() -> None:
    events = [reply(1.2, ttft=0.3), reply(0.8, ttft=0.25), judge_call(30.0, 0.1)]
    result = check("latency", events, max_total_sec=2.5, max_call_sec=1.5, max_ttft_sec=0.5)
    assert result.passed
    assert result.reason == (
        "2 model call(s) took 2.000 s, within max_total_sec 2.5; "
        "the slowest of 2 model call(s) took 1.200 s, within max_call_sec 1.5; "
        "the slowest first token of 2 streamed call(s) came after 0.300 s, within max_ttft_sec 0.5"
    )


def test_latency_names_each_limit_exceeded_and_scores_the_share_met() -> None:
    events = [reply(1.2, ttft=0.9), reply(3.1, ttft=0.2)]
    result = check("latency", events, max_total_sec=5, max_call_sec=3, max_ttft_sec=0.5)
    assert not result.passed
    assert result.score == pytest.approx(1 / 3)
    assert result.reason == (
        "the slowest of 2 model call(s) took 3.100 s, over max_call_sec 3; "
        "the slowest first token of 2 streamed call(s) came after 0.900 s, over max_ttft_sec 0.5"
    )


def test_ttft_needs_a_streamed_call() -> None:
    result = check("latency", [reply(0.5)], max_ttft_sec=1)
    assert not result.passed
    assert result.reason.startswith("none of 1 model call(s) was streamed")


def test_latency_ignores_the_judge_and_a_command_agents_own_lines() -> None:
    result = check("latency", [judge_call(0.1, 0.0), agent_line()], max_total_sec=10)
    assert not result.passed
    assert result.reason.startswith("no model call of benchyard's in the trajectory")


def test_latency_needs_a_limit() -> None:
    assert "give max_total_sec, max_call_sec, max_ttft_sec" in params_error("latency")
    assert "greater than 0" in params_error("latency", max_total_sec=0)


# --- cost --------------------------------------------------------------------------------------


def test_cost_within_budget_counts_agent_reports_but_not_the_judge() -> None:
    events = [reply(1, cost=0.0012), agent_line(cost=0.0003, tokens_in=40), judge_call(1, 5.0)]
    result = check("cost", events, max_usd=0.002)
    assert result.passed
    assert result.reason == (
        "the attempt cost $0.001500 (50 tokens in, 5 out), within max_usd 0.002"
    )


def test_cost_over_budget_fails() -> None:
    result = check("cost", [reply(1, cost=0.004), reply(1, cost=0.002)], max_usd=0.005)
    assert not result.passed
    assert result.reason == "the attempt cost $0.006000 (20 tokens in, 10 out), over max_usd 0.005"


def test_an_unknown_cost_fails_rather_than_passing_silently() -> None:
    result = check("cost", [reply(1)], max_usd=1)
    assert not result.passed
    assert result.reason.startswith("the attempt's cost is unknown: no event carries a cost")


def test_cost_needs_a_budget() -> None:
    assert "Field required" in params_error("cost")
    assert "greater than or equal to 0" in params_error("cost", max_usd=-1)


# --- finish_reason -----------------------------------------------------------------------------


def test_finish_reason_of_the_last_call() -> None:
    events = [reply(1, finish="tool_calls"), reply(1, finish="stop"), judge_call(1, 0.0)]
    result = check("finish_reason", events, value="stop")
    assert result.passed
    assert result.reason == "the last of 2 model call(s) finished with stop, expected stop"
    truncated = check("finish_reason", [reply(1, finish="length")], value="stop")
    assert not truncated.passed
    assert truncated.reason == "the last of 1 model call(s) finished with length, expected stop"


def test_finish_reason_of_every_call() -> None:
    events = [reply(1, finish="tool_calls"), reply(1, finish="stop"), reply(1, finish=None)]
    result = check("finish_reason", events, value=["stop", "tool_calls"], calls="every")
    assert not result.passed
    assert result.reason == (
        "1 of 3 model call(s) did not finish with stop or tool_calls (call 3: none given)"
    )
    assert check("finish_reason", events[:2], value=["stop", "tool_calls"], calls="every").passed


def test_finish_reason_without_model_calls_fails() -> None:
    result = check("finish_reason", [agent_line()], value="stop")
    assert not result.passed
    assert result.reason.startswith("expected finish reason stop, but the trajectory holds no")


def test_finish_reason_values_are_checked_at_load_time() -> None:
    assert "Input should be 'stop', 'length', 'tool_calls'" in params_error(
        "finish_reason", value="end_turn"
    )
    assert "Input should be 'last' or 'every'" in params_error(
        "finish_reason", value="stop", calls="first"
    )
