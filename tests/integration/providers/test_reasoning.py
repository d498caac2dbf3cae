"""Reasoning models: an answer lost to reasoning (empty, the token budget spent thinking) is
detected, recorded, retried once with reasoning lowered, counted in the report, and re-run alone
by `benchyard rerun RUN --recover`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchyard.store.store import Store
from tests.integration.providers.conftest import StartFake, write_project
from tests.support import Cli, write_benchmark

THINKING = "Let me think about this very carefully, step by step, before answering."
LOST = {
    "reasoning": THINKING,
    "content": "",
    "finish_reason": "length",
    "reasoning_tokens": 64,
}


def scenarios() -> list[dict[str, Any]]:
    return [
        {
            "id": f"sum-{n}",
            "stimulus": f"sum-{n}: what is {n} + {n}?",
            "checks": [{"type": "numeric", "value": 2 * n}],
        }
        for n in (1, 2, 3)
    ]


def test_an_answer_lost_to_reasoning_is_retried_with_reasoning_lowered(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    llm = fake_llm(
        {"replies": [{"match": "sum-1", "times": 1, **LOST}, {"match": "sum-1", "content": "2"}]}
    )
    write_project(cli.cwd, llm.url, agent={"max_tokens": 64})
    bench = write_benchmark(tmp_path / "bench", scenarios()[:1])
    cli("run", str(bench), "--agent", "model", "-q")
    (attempt,) = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert attempt.verdict == "passed", attempt.cause
    assert attempt.turns == 1
    events = attempt.trajectory or []
    lost = next(e for e in events if e.kind == "message" and e.reasoning)
    assert lost.reasoning == THINKING and lost.content == ""
    assert lost.data and lost.data["finish_reason"] == "length"
    note = next(e for e in events if (e.data or {}).get("reasoning_truncated"))
    assert "token budget (64) went to reasoning (64 reasoning tokens)" in note.content
    assert "reasoning_effort" not in llm.requests[0]
    assert llm.requests[1]["reasoning_effort"] == "low"
    summary = json.loads(cli("report", "latest", "--format", "json").output)["summary"]
    assert summary["reasoning_truncated"] == 0


def test_unrecovered_answers_are_counted_and_rerun_with_recover(
    tmp_path: Path, cli: Cli, store: Store, fake_llm: StartFake
) -> None:
    script = {
        "replies": [
            {"match": "sum-1", **LOST},  # always lost: even with reasoning lowered
            {"match": "sum-2", "content": "5"},  # a plain wrong answer
            {"match": "sum-3", "content": "6"},
        ]
    }
    llm = fake_llm(script)
    write_project(
        cli.cwd,
        llm.url,
        agent={"max_tokens": 64, "reasoning_fallback": {"reasoning_effort": "minimal"}},
    )
    bench = write_benchmark(tmp_path / "bench", scenarios())
    cli("run", str(bench), "--agent", "model", "-q")
    run = store.resolve_run("latest")
    attempts = {a.scenario_id: a for a in store.attempts(run.id)}
    assert (attempts["sum-1"].verdict, attempts["sum-1"].failure_kind) == (
        "failed",
        "reasoning_truncated",
    )
    assert "still empty after a retry with" in (attempts["sum-1"].cause or "")
    assert (attempts["sum-2"].verdict, attempts["sum-3"].verdict) == ("failed", "passed")
    report = json.loads(cli("report", "latest", "--format", "json").output)
    assert report["summary"]["reasoning_truncated"] == 1
    assert report["summary"]["counted"] == 3
    assert "lost to reasoning" in cli("report", "latest").output

    requests_before = len(llm.requests)
    result = cli("rerun", "latest", "--recover", "--max-tokens", "512", "-q")
    assert result.exit_code == 0, result.output
    rerun = store.resolve_run("latest")
    assert rerun.parent_run_id == run.id
    assert [a.scenario_id for a in store.attempts(rerun.id)] == ["sum-1"]
    assert rerun.agent_config["max_tokens"] == 512
    assert {r["max_tokens"] for r in llm.requests[requests_before:]} == {512}


def test_recover_without_such_attempts_is_refused(
    tmp_path: Path, cli: Cli, fake_llm: StartFake
) -> None:
    llm = fake_llm({"default": {"content": "2"}})
    write_project(cli.cwd, llm.url)
    bench = write_benchmark(tmp_path / "bench", scenarios()[:1])
    cli("run", str(bench), "--agent", "model", "-q")
    result = cli("rerun", "latest", "--recover")
    assert result.exit_code == 2
    assert "has no answer lost to reasoning to re-run" in result.output
