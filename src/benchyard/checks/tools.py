"""Checks on the tool calls benchyard observed: the expected chain of calls, and their cost.

Both read the calls benchyard answered itself (the `openai` agent's loop, or the tool server of a
command agent), never calls an agent merely reported in its own trajectory lines.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchyard.checks.answer_text import clip
from benchyard.checks.base import CheckParams, CheckResult, Evidence
from benchyard.checks.registry import check
from benchyard.runner.tool_events import ObservedCall, observed_calls
from benchyard.spec.tools import arguments_match

ChainMode = Literal["exact", "in_order", "any_order", "must_include", "must_not_include"]
SHOWN_CALLS = 6


class ExpectedCall(BaseModel):
    """A call as a check expects it: a tool name and, optionally, arguments to match."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    arguments: dict[str, Any] | None = None

    def matches(self, call: ObservedCall, exact: bool) -> bool:
        if call.name != self.name:
            return False
        return self.arguments is None or arguments_match(
            self.arguments, call.arguments, exact=exact
        )

    def __str__(self) -> str:
        if self.arguments is None:
            return self.name
        return f"{self.name}({json.dumps(self.arguments, ensure_ascii=False, sort_keys=True)})"


class ToolChainParams(CheckParams):
    calls: list[ExpectedCall] = Field(default_factory=list)
    mode: ChainMode = "in_order"
    arguments: Literal["partial", "exact"] = Field(
        default="partial",
        description="partial: the listed arguments must be equal; exact: no other arguments.",
    )
    max_calls: int | None = Field(default=None, ge=0, description="Most tool calls in total.")

    @model_validator(mode="after")
    def _something_to_check(self) -> ToolChainParams:
        if not self.calls and self.max_calls is None:
            raise ValueError("give 'calls', 'max_calls' or both")
        return self


@check("tool_chain", ToolChainParams)
def tool_chain(params: ToolChainParams, evidence: Evidence) -> CheckResult:
    """The agent's tool calls follow the expected chain (exact, in order, any order, include, exclude)."""
    calls = observed_calls(evidence.trajectory)
    exact = params.arguments == "exact"
    problems = []
    if params.calls:
        problem = _CHAIN_MODES[params.mode](params.calls, calls, exact)
        if problem:
            problems.append(problem)
    if params.max_calls is not None and len(calls) > params.max_calls:
        problems.append(f"{len(calls)} tool calls, more than max_calls {params.max_calls}")
    if problems:
        return CheckResult.of(False, f"{'; '.join(problems)}; calls: {_shown(calls)}")
    return CheckResult.of(True, f"{len(calls)} tool calls as expected ({params.mode})")


def _exact(expected: list[ExpectedCall], calls: list[ObservedCall], exact: bool) -> str | None:
    for index, (want, call) in enumerate(zip(expected, calls, strict=False), start=1):
        if not want.matches(call, exact):
            return f"call {index} was {_call(call)}, expected {want}"
    if len(calls) != len(expected):
        return f"{len(calls)} tool calls, expected exactly {len(expected)}"
    return None


def _in_order(expected: list[ExpectedCall], calls: list[ObservedCall], exact: bool) -> str | None:
    position = 0
    for index, want in enumerate(expected, start=1):
        while position < len(calls) and not want.matches(calls[position], exact):
            position += 1
        if position == len(calls):
            return f"expected call {index} ({want}) not found in order"
        position += 1
    return None


def _unmatched(
    expected: list[ExpectedCall], calls: list[ObservedCall], exact: bool
) -> tuple[list[ExpectedCall], list[ObservedCall]]:
    """Pair each expected call with a distinct observed one; return what is left on both sides."""
    remaining = list(calls)
    missing = []
    for want in expected:
        found = next((call for call in remaining if want.matches(call, exact)), None)
        if found is None:
            missing.append(want)
        else:
            remaining.remove(found)
    return missing, remaining


def _any_order(expected: list[ExpectedCall], calls: list[ObservedCall], exact: bool) -> str | None:
    missing, extra = _unmatched(expected, calls, exact)
    if missing:
        return f"missing {', '.join(map(str, missing))}"
    if extra:
        return f"unexpected {', '.join(map(_call, extra))}"
    return None


def _must_include(
    expected: list[ExpectedCall], calls: list[ObservedCall], exact: bool
) -> str | None:
    missing, _ = _unmatched(expected, calls, exact)
    return f"missing {', '.join(map(str, missing))}" if missing else None


def _must_not_include(
    expected: list[ExpectedCall], calls: list[ObservedCall], exact: bool
) -> str | None:
    forbidden = [call for call in calls if any(want.matches(call, exact) for want in expected)]
    return f"forbidden {', '.join(map(_call, forbidden))}" if forbidden else None


_CHAIN_MODES = {
    "exact": _exact,
    "in_order": _in_order,
    "any_order": _any_order,
    "must_include": _must_include,
    "must_not_include": _must_not_include,
}


def _call(call: ObservedCall) -> str:
    arguments = json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)
    return clip(f"{call.name}({arguments})", 60)


def _shown(calls: list[ObservedCall]) -> str:
    if not calls:
        return "none"
    shown = ", ".join(_call(call) for call in calls[:SHOWN_CALLS])
    return shown + (f" and {len(calls) - SHOWN_CALLS} more" if len(calls) > SHOWN_CALLS else "")


class ToolCostParams(CheckParams):
    costs: dict[str, float] = Field(default_factory=dict, description="Cost of one call, by tool.")
    default_cost: float = Field(default=1.0, ge=0, description="Cost of a call to any other tool.")
    budget: float = Field(ge=0, description="Pass when the total cost is at most this.")
    target: ExpectedCall | None = Field(
        default=None, description="The call that reaches the goal; without it there is no bonus."
    )
    bonus: float = Field(default=0.0, ge=0, description="Earned when the target call is made.")

    @model_validator(mode="after")
    def _consistent(self) -> ToolCostParams:
        negative = sorted(name for name, cost in self.costs.items() if cost < 0)
        if negative:
            raise ValueError(f"costs must not be negative: {', '.join(negative)}")
        if self.bonus > 0 and self.target is None:
            raise ValueError("a bonus needs a target: the call that earns it")
        return self


@check("tool_cost", ToolCostParams)
def tool_cost(params: ToolCostParams, evidence: Evidence) -> CheckResult:
    """The tool calls stay within a budget (and reach the target); the score rewards thrift."""
    calls = observed_calls(evidence.trajectory)
    spent = sum(params.costs.get(call.name, params.default_cost) for call in calls)
    reached = params.target is not None and any(
        params.target.matches(call, exact=False) for call in calls
    )
    within = spent <= params.budget
    passed = within and (params.target is None or reached)
    earned = params.bonus if reached else 0.0
    reason = f"{len(calls)} tool calls cost {spent:g} of budget {params.budget:g}"
    if params.target is not None:
        reason += f"; target {params.target} {'reached' if reached else 'not reached'}"
        reason += f"; reward {earned - spent:g} (bonus {earned:g} - cost {spent:g})"
    return CheckResult(passed, round(_score(params, spent, reached), 6), reason)


def _score(params: ToolCostParams, spent: float, reached: bool) -> float:
    """0 when a target was set and missed; the reward as a share of the bonus when there is one;
    else 1 for no cost, falling linearly to 0 at twice the budget (0.5 at the budget itself)."""
    if params.target is not None and not reached:
        return 0.0
    if params.bonus > 0:
        return min(1.0, max(0.0, (params.bonus - spent) / params.bonus))
    if params.budget == 0:
        return 1.0 if spent == 0 else 0.0
    return max(0.0, 1.0 - spent / (2 * params.budget))
