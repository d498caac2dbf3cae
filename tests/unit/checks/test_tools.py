"""tool_chain in each mode and tool_cost, on hand-written traces of observed tool calls."""

from __future__ import annotations

from typing import Any

import pytest

from benchyard.checks.base import CheckResult, Evidence
from benchyard.runner.tool_events import call_event, result_event
from benchyard.runner.trajectory import Event
from benchyard.spec.models import Scenario
from tests.unit.checks.helpers import check_type, params_error

SCENARIO = Scenario.model_validate(
    {"id": "s", "stimulus": "q", "checks": [{"type": "equals", "value": "x"}]}
)


def trace(*calls: tuple[str, dict[str, Any]], errors: tuple[int, ...] = ()) -> list[Event]:
    """Events as benchyard records them: a tool_call and a tool_result per call."""
    events: list[Event] = [Event(kind="message", role="user", content="q")]
    for index, (name, arguments) in enumerate(calls, start=1):
        events.append(call_event(name, arguments, f"call-{index}", 1))
        events.append(result_event(name, "result", f"call-{index}", error=index in errors))
    return events


def check(name: str, events: list[Event], **params: Any) -> CheckResult:
    kind = check_type(name)
    result = kind.evaluate(
        kind.params.model_validate(params), Evidence("answer", SCENARIO, trajectory=events)
    )
    assert isinstance(result, CheckResult)
    return result


SEARCH_FETCH_SUBMIT = trace(
    ("search", {"query": "flights to Oslo", "limit": 5}),
    ("fetch", {"url": "https://a.example"}),
    ("submit", {"flight": "SK4021"}),
)
S, F, U = {"name": "search"}, {"name": "fetch"}, {"name": "submit"}


@pytest.mark.parametrize(
    ("mode", "calls", "passes"),
    [
        ("exact", [S, F, U], True),
        ("exact", [S, U], False),
        ("exact", [F, S, U], False),
        ("in_order", [S, U], True),
        ("in_order", [U, S], False),
        ("any_order", [U, F, S], True),
        ("any_order", [U, S], False),  # fetch was not expected
        ("must_include", [U, S], True),
        ("must_include", [U, {"name": "book"}], False),
        ("must_not_include", [{"name": "book"}], True),
        ("must_not_include", [F], False),
    ],
)
def test_chain_modes(mode: str, calls: list[dict[str, Any]], passes: bool) -> None:
    result = check("tool_chain", SEARCH_FETCH_SUBMIT, mode=mode, calls=calls)
    assert result.passed is passes, result.reason


def test_failure_reasons_name_the_calls() -> None:
    result = check("tool_chain", SEARCH_FETCH_SUBMIT, mode="exact", calls=[S, U])
    assert result.reason.startswith(
        'call 2 was fetch({"url": "https://a.example"}), expected submit'
    )
    result = check("tool_chain", SEARCH_FETCH_SUBMIT, mode="must_not_include", calls=[F])
    assert result.reason.startswith('forbidden fetch({"url": "https://a.example"})')
    result = check("tool_chain", SEARCH_FETCH_SUBMIT, mode="any_order", calls=[U, S])
    assert result.reason.startswith("unexpected fetch")


def test_partial_and_exact_argument_matching() -> None:
    partial = [{"name": "search", "arguments": {"query": "FLIGHTS to oslo "}}]
    assert check("tool_chain", SEARCH_FETCH_SUBMIT, mode="must_include", calls=partial).passed
    exact = check(
        "tool_chain", SEARCH_FETCH_SUBMIT, mode="must_include", calls=partial, arguments="exact"
    )
    assert not exact.passed and "missing search" in exact.reason
    full = [{"name": "search", "arguments": {"query": "flights to Oslo", "limit": 5}}]
    assert check(
        "tool_chain", SEARCH_FETCH_SUBMIT, mode="must_include", calls=full, arguments="exact"
    ).passed
    wrong_type = [{"name": "search", "arguments": {"limit": "5"}}]
    assert not check(
        "tool_chain", SEARCH_FETCH_SUBMIT, mode="must_include", calls=wrong_type
    ).passed


def test_max_calls_alone_and_with_a_mode() -> None:
    assert check("tool_chain", SEARCH_FETCH_SUBMIT, max_calls=3).passed
    result = check("tool_chain", SEARCH_FETCH_SUBMIT, max_calls=2)
    assert not result.passed and "3 tool calls, more than max_calls 2" in result.reason
    assert not check(
        "tool_chain", SEARCH_FETCH_SUBMIT, mode="in_order", calls=[S], max_calls=1
    ).passed
    assert check("tool_chain", trace(), max_calls=0).passed


def test_self_reported_calls_do_not_count() -> None:
    events = [Event(kind="tool_call", content="search(x)", data={"source": "agent"})]
    assert not check("tool_chain", events, mode="must_include", calls=[S]).passed


def test_chain_params_are_checked_at_load_time() -> None:
    assert "give 'calls', 'max_calls' or both" in params_error("tool_chain")
    assert "mode" in params_error("tool_chain", calls=[S], mode="sometimes")
    assert "arguments" in params_error("tool_chain", calls=[S], arguments="fuzzy")


COSTS = {"costs": {"search": 1, "fetch": 3}, "default_cost": 0.5}


def test_cost_within_budget_reaching_the_target() -> None:
    result = check(
        "tool_cost", SEARCH_FETCH_SUBMIT, **COSTS, budget=5, target={"name": "submit"}, bonus=10
    )
    assert result.passed
    assert result.score == pytest.approx((10 - 4.5) / 10)
    assert result.reason == (
        "3 tool calls cost 4.5 of budget 5; target submit reached; reward 5.5 (bonus 10 - cost 4.5)"
    )


def test_over_investigating_is_over_budget() -> None:
    digging = trace(*[("search", {"query": f"q{i}"}) for i in range(6)], ("submit", {}))
    result = check("tool_cost", digging, **COSTS, budget=5, target={"name": "submit"}, bonus=10)
    assert not result.passed and result.score == pytest.approx(0.35)
    assert "7 tool calls cost 6.5 of budget 5" in result.reason


def test_missing_the_target_scores_nothing() -> None:
    result = check(
        "tool_cost", trace(("search", {})), **COSTS, budget=5, target={"name": "submit"}, bonus=10
    )
    assert not result.passed and result.score == 0.0
    assert "target submit not reached" in result.reason


def test_cost_without_a_target_rewards_thrift() -> None:
    assert check("tool_cost", trace(), budget=4).score == 1.0
    assert check("tool_cost", trace(("a", {}), ("b", {})), budget=4).score == 0.75
    assert check("tool_cost", trace(("a", {})), budget=0).score == 0.0


def test_cost_params_are_checked_at_load_time() -> None:
    assert "budget" in params_error("tool_cost")
    assert "a bonus needs a target" in params_error("tool_cost", budget=1, bonus=5)
    assert "costs must not be negative: search" in params_error(
        "tool_cost", budget=1, costs={"search": -1}
    )
