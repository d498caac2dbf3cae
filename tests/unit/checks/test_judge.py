"""The judge checks against a scripted judge over real HTTP (benchyard's fake server): verdicts,
criteria, an unreadable reply asked again and then an infrastructure error, costs kept apart."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchyard.checks.base import CheckFailedToRun, CheckResult, Evidence
from benchyard.providers.fake_server import FakeLLM
from benchyard.providers.judge import Judge, JudgeConfig
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import judge_totals, token_totals
from benchyard.spec.models import Scenario
from benchyard.store.store import Store
from tests.integration.providers.conftest import write_project
from tests.support import Cli, write_benchmark
from tests.unit.checks.helpers import check_type

GOOD = json.dumps(
    {
        "criteria": [
            {"criterion": 1, "met": True, "reason": "names Paris"},
            {"criterion": 2, "met": False, "reason": "three sentences"},
        ],
        "explanation": "Correct city, too long.",
    }
)
SCRIPT = {
    "replies": [
        {
            "match": "Answer to grade:\n<<<\nParis is the capital",
            "content": GOOD,
            "prompt_tokens": 100,
            "completion_tokens": 20,
        },
        {
            "match": "Lyon",
            "content": "```json\n"
            + json.dumps({"same_meaning": False, "explanation": "Lyon is not Paris"})
            + "\n```",
        },
        {
            "match": "The capital is Paris",
            "content": '{"same_meaning": "yes", "explanation": "same city"}',
        },
        {"match": "flaky judge", "content": "I think it is fine.", "times": 1},
        {"match": "flaky judge", "content": '{"same_meaning": true, "explanation": "ok"}'},
        {"match": "broken judge", "content": "Sure! The answer looks good to me."},
    ]
}


@pytest.fixture(scope="module")
def judge_url() -> Iterator[str]:
    with FakeLLM(SCRIPT) as llm:
        yield llm.url


def judge(url: str) -> Judge:
    return Judge(
        JudgeConfig(
            provider={"base_url": url, "max_retries": 0},
            model="judge-model",
            parse_retries=1,
            price={"input_per_mtok": 10, "output_per_mtok": 20},
        )
    )


def evaluate(
    url: str, name: str, answer: str, reference: str = "Paris", **params: Any
) -> tuple[CheckResult, Evidence]:
    scenario = Scenario.model_validate(
        {
            "id": "s",
            "stimulus": "What is the capital of France?",
            "reference": reference,
            "checks": [{"type": "equals", "value": "x"}],
        }
    )
    kind = check_type(name)
    chosen = judge(url)
    evidence = Evidence(answer=answer, scenario=scenario, answers=[answer], judge=chosen)

    async def run() -> CheckResult:
        try:
            result = kind.evaluate(kind.params.model_validate(params), evidence)
            assert asyncio.iscoroutine(result)
            return await result
        finally:
            await chosen.aclose()

    return asyncio.run(run()), evidence


def test_rubric_scores_each_criterion(judge_url: str) -> None:
    answer = "Paris is the capital. It is large. It is old."
    result, evidence = evaluate(
        judge_url,
        "llm_rubric",
        answer,
        criteria=["Names Paris", "At most two sentences"],
        min_score=0.5,
    )
    assert result.passed and result.score == 0.5
    assert "1/2 criteria met" in result.reason
    assert "✓ 1 Names Paris (names Paris)" in result.reason
    assert "✗ 2 At most two sentences (three sentences)" in result.reason
    assert "judge: Correct city, too long." in result.reason
    (call,) = evidence.trajectory
    assert call.role == "judge" and call.data and call.data["check"] == "llm_rubric"
    assert judge_totals(evidence.trajectory) == (100, 20, (100 * 10 + 20 * 20) / 1e6)
    assert token_totals(evidence.trajectory) == (0, 0, None)  # the agent's totals stay its own


def test_rubric_fails_below_min_score(judge_url: str) -> None:
    result, _ = evaluate(
        judge_url, "llm_rubric", "Paris is the capital. More.", criteria=["Names Paris", "Short"]
    )
    assert not result.passed and result.score == 0.5


def test_reference_match_reads_a_fenced_verdict(judge_url: str) -> None:
    result, _ = evaluate(judge_url, "reference_match", "Lyon")
    assert not result.passed
    assert "does not mean the same as the reference: Lyon is not Paris" in result.reason


def test_reference_match_accepts_yes(judge_url: str) -> None:
    result, _ = evaluate(judge_url, "reference_match", "The capital is Paris.")
    assert result.passed


def test_an_unreadable_reply_is_asked_again(judge_url: str) -> None:
    result, evidence = evaluate(judge_url, "reference_match", "flaky judge")
    assert result.passed
    kinds = [(e.kind, e.role) for e in evidence.trajectory]
    assert kinds == [("message", "judge"), ("error", "judge"), ("message", "judge")]
    assert "no JSON object in the reply" in evidence.trajectory[1].content


def test_a_reply_that_stays_unreadable_is_retried_then_held_against_the_answer(
    judge_url: str,
) -> None:
    with pytest.raises(AttemptFailure) as failure:
        evaluate(judge_url, "reference_match", "broken judge")
    assert failure.value.kind == FailureKind.JUDGE_UNPARSEABLE
    policy = failure.value.policy
    # An answer can steer its judge into an unreadable reply: retried, then counted as failed.
    assert (policy.retry, policy.counts, policy.verdict) == (True, True, "failed")
    assert "asked 2 times" in failure.value.message


def test_without_a_judge_the_check_cannot_run() -> None:
    scenario = Scenario.model_validate(
        {"id": "s", "stimulus": "q", "checks": [{"type": "equals", "value": "x"}]}
    )
    kind = check_type("reference_match")
    with pytest.raises(CheckFailedToRun, match="no judge model configured"):
        asyncio.run(
            kind.evaluate(kind.params.model_validate({"reference": "x"}), Evidence("x", scenario))
        )  # type: ignore[arg-type]


def test_rubric_params_are_checked_at_load_time() -> None:
    from tests.unit.checks.helpers import params_error

    assert "criteria" in params_error("llm_rubric", criteria=[])
    assert "min_score" in params_error("llm_rubric", criteria=["x"], min_score=2)


def test_an_unparseable_judge_in_a_run_is_retried_then_counted_as_failed(
    tmp_path: Path, cli: Cli, store: Store, judge_url: str
) -> None:
    with FakeLLM({"default": {"content": "broken judge"}}) as agent_llm:
        write_project(cli.cwd, agent_llm.url, judge={"parse_retries": 0}, judge_url=judge_url)
        scenario = {
            "id": "judged",
            "stimulus": "Say something.",
            "reference": "anything",
            "checks": [{"type": "reference_match"}],
        }
        bench = write_benchmark(tmp_path / "bench", [scenario])
        result = cli(
            "run", str(bench), "--agent", "model", "--retries", "1", "--retry-backoff", "0.01", "-q"
        )
    assert result.exit_code == 0, result.output  # its one attempt failed: graded, not an error
    run = store.resolve_run("latest")
    assert run.settings["judge"]["model"] == "judge-model"
    tries = store.attempts(run.id, include_superseded=True, with_evidence=True)
    assert [(t.verdict, t.failure_kind, t.superseded) for t in tries] == [
        ("error", "judge_unparseable", True),
        ("failed", "judge_unparseable", False),
    ]
    assert "the answer could not be graded: counted as failed after 2 tries" in (
        tries[-1].cause or ""
    )
    judge_events = [e for e in tries[0].trajectory or [] if e.role == "judge"]
    assert judge_events and all(e.data and e.data["source"] == "judge" for e in judge_events)
    assert tries[0].cost_usd is not None and tries[0].cost_usd < judge_events[0].cost_usd  # type: ignore[operator]
    summary = json.loads(cli("report", "latest", "--format", "json").output)["summary"]
    assert (summary["failed"], summary["errors"], summary["counted"]) == (1, 0, 1)


def test_a_run_with_judge_checks_and_no_judge_is_refused(tmp_path: Path, cli: Cli) -> None:
    scenario = {
        "id": "judged",
        "stimulus": "Say something.",
        "checks": [{"type": "llm_rubric", "criteria": ["Says something"]}],
    }
    bench = write_benchmark(tmp_path / "bench", [scenario])
    result = cli("run", str(bench), "--agent", "oracle")
    assert result.exit_code == 2
    assert (
        "scenario 'judged' has a llm_rubric check but no judge model is configured" in result.output
    )


def test_the_report_costs_the_judge_apart_from_the_agent(
    tmp_path: Path, cli: Cli, store: Store, judge_url: str
) -> None:
    with FakeLLM({"default": {"content": "The capital is Paris."}}) as agent_llm:
        write_project(cli.cwd, agent_llm.url, judge_url=judge_url)
        scenario = {
            "id": "judged",
            "stimulus": "What is the capital of France?",
            "reference": "Paris",
            "checks": [{"type": "reference_match"}],
        }
        bench = write_benchmark(tmp_path / "bench", [scenario])
        assert cli("run", str(bench), "--agent", "model", "-q").exit_code == 0
    run = store.resolve_run("latest")
    [attempt] = store.attempts(run.id, with_evidence=True)
    assert attempt.verdict == "passed", attempt.cause
    judged = judge_totals(attempt.trajectory or [])
    assert judged[0] > 0 and judged[2] is not None and judged[2] > 0
    summary = json.loads(cli("report", "latest", "--format", "json").output)["summary"]
    assert (summary["judge_tokens_in"], summary["judge_tokens_out"]) == judged[:2]
    assert summary["judge_cost_usd"] == pytest.approx(judged[2])
    agent_tokens = token_totals(attempt.trajectory or [])
    assert (summary["tokens_in"], summary["tokens_out"]) == agent_tokens[:2]
    assert "judge" in cli("report", "latest").output
