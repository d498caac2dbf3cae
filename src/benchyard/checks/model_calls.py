"""Checks on the model calls of an attempt, read from its trajectory: `latency` (time waiting for the
model, time to first token), `cost` (US dollars) and `finish_reason` (why the model stopped).

Latency and finish reasons are those benchyard measured on the calls it made itself (the `openai`
agent's: message events with `data.source == "model"`); the judge's calls never count. Cost is the
attempt's cost as reports count it (runner/trajectory.py `token_totals`): those calls, plus the
costs a command agent reports in its own trajectory lines.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check
from benchyard.runner.trajectory import Event, token_totals

FinishReason = Literal["stop", "length", "tool_calls", "content_filter", "function_call"]
MODEL_SOURCE = "model"
NOT_TIMED = (
    "no model call of benchyard's in the trajectory (latency is measured on the calls of the "
    "openai agent; a command agent's own calls are not timed)"
)


def model_calls(trajectory: list[Event]) -> list[Event]:
    """The replies benchyard received from the agent's model, in order (no judge, no self-reports)."""
    return [
        event
        for event in trajectory
        if event.kind == "message"
        and event.role == "assistant"
        and (event.data or {}).get("source") == MODEL_SOURCE
    ]


def _combined(outcomes: list[tuple[bool, str]]) -> CheckResult:
    """One result from several constraints: each says what was found against what was allowed."""
    unmet = [text for met, text in outcomes if not met]
    score = 1 - len(unmet) / len(outcomes)
    if unmet:
        return CheckResult(False, score, "; ".join(unmet))
    return CheckResult(True, score, "; ".join(text for _, text in outcomes))


def _seconds(value: float) -> str:
    return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"


# --- latency -----------------------------------------------------------------------------------


class LatencyParams(CheckParams):
    max_total_sec: float | None = Field(
        default=None, gt=0, description="Most seconds waiting for the model, all calls together."
    )
    max_call_sec: float | None = Field(
        default=None, gt=0, description="Most seconds of any one model call."
    )
    max_ttft_sec: float | None = Field(
        default=None,
        gt=0,
        description="Most seconds to the first token, in every streamed model call.",
    )

    @model_validator(mode="after")
    def _something_to_check(self) -> LatencyParams:
        if self.max_total_sec is None and self.max_call_sec is None and self.max_ttft_sec is None:
            raise ValueError("give max_total_sec, max_call_sec, max_ttft_sec or several")
        return self


@check("latency", LatencyParams)
def latency(params: LatencyParams, evidence: Evidence) -> CheckResult:
    """The model calls were fast enough: in total, each, and to their first token."""
    timed = [event for event in model_calls(evidence.trajectory) if event.latency_sec is not None]
    if not timed:
        return CheckResult.of(False, NOT_TIMED)
    latencies = [event.latency_sec or 0.0 for event in timed]
    calls = f"{len(timed)} model call(s)"
    outcomes: list[tuple[bool, str]] = []
    if params.max_total_sec is not None:
        total = sum(latencies)
        met = total <= params.max_total_sec
        word = "within" if met else "over"
        outcomes.append(
            (met, f"{calls} took {_seconds(total)}, {word} max_total_sec {params.max_total_sec:g}")
        )
    if params.max_call_sec is not None:
        slowest = max(latencies)
        met = slowest <= params.max_call_sec
        word = "within" if met else "over"
        outcomes.append(
            (
                met,
                f"the slowest of {calls} took {_seconds(slowest)}, "
                f"{word} max_call_sec {params.max_call_sec:g}",
            )
        )
    if params.max_ttft_sec is not None:
        outcomes.append(_ttft(timed, params.max_ttft_sec))
    return _combined(outcomes)


def _ttft(timed: list[Event], limit: float) -> tuple[bool, str]:
    streamed = [event.ttft_sec for event in timed if event.ttft_sec is not None]
    if not streamed:
        return False, (
            f"none of {len(timed)} model call(s) was streamed, so no time to first token was "
            f"measured (max_ttft_sec {limit:g}; the openai agent measures it with stream: true)"
        )
    slowest = max(streamed)
    met = slowest <= limit
    return met, (
        f"the slowest first token of {len(streamed)} streamed call(s) came after "
        f"{_seconds(slowest)}, {'within' if met else 'over'} max_ttft_sec {limit:g}"
    )


# --- cost --------------------------------------------------------------------------------------


class CostParams(CheckParams):
    max_usd: float = Field(ge=0, description="Most US dollars the attempt's model calls may cost.")


@check("cost", CostParams)
def cost(params: CostParams, evidence: Evidence) -> CheckResult:
    """The attempt's model calls cost at most `max_usd` (the judge's apart)."""
    tokens_in, tokens_out, spent = token_totals(evidence.trajectory)
    if spent is None:
        return CheckResult.of(
            False,
            f"the attempt's cost is unknown: no event carries a cost ({tokens_in} tokens in, "
            f"{tokens_out} out; give the model a price in benchyard.yaml), so max_usd "
            f"{params.max_usd:g} cannot be shown to hold",
        )
    met = spent <= params.max_usd
    return CheckResult.of(
        met,
        f"the attempt cost ${spent:.6f} ({tokens_in} tokens in, {tokens_out} out), "
        f"{'within' if met else 'over'} max_usd {params.max_usd:g}",
    )


# --- finish_reason ------------------------------------------------------------------------------


class FinishReasonParams(CheckParams):
    value: FinishReason | list[FinishReason] = Field(
        description="The expected finish reason, or several that are all accepted."
    )
    calls: Literal["last", "every"] = Field(
        default="last", description="Check the attempt's last model call, or every one."
    )

    def accepted(self) -> list[str]:
        return [self.value] if isinstance(self.value, str) else list(self.value)


@check("finish_reason", FinishReasonParams)
def finish_reason(params: FinishReasonParams, evidence: Evidence) -> CheckResult:
    """The model's finish reason (stop, length, tool_calls, content_filter) is the expected one."""
    accepted = params.accepted()
    wanted = " or ".join(accepted)
    replies = model_calls(evidence.trajectory)
    if not replies:
        return CheckResult.of(
            False,
            f"expected finish reason {wanted}, but the trajectory holds no model call of "
            "benchyard's (finish reasons are recorded for the openai agent's calls)",
        )
    reasons = [str((event.data or {}).get("finish_reason") or "none given") for event in replies]
    if params.calls == "last":
        found = reasons[-1]
        met = found in accepted
        return CheckResult.of(
            met,
            f"the last of {len(reasons)} model call(s) finished with {found}, expected {wanted}",
        )
    wrong = [(index, found) for index, found in enumerate(reasons, 1) if found not in accepted]
    if not wrong:
        return CheckResult.of(True, f"all {len(reasons)} model call(s) finished with {wanted}")
    shown = ", ".join(f"call {index}: {found}" for index, found in wrong[:5])
    more = f" and {len(wrong) - 5} more" if len(wrong) > 5 else ""
    return CheckResult.of(
        False,
        f"{len(wrong)} of {len(reasons)} model call(s) did not finish with {wanted} "
        f"({shown}{more})",
    )
