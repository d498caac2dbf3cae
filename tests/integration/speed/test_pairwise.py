"""`benchyard pairwise`: a judge on the fake server compares two runs' answers in both orders.
A judge that always prefers the first answer shown decides nothing and has a position-bias
rate of 1; one that prefers the better answer wherever it is shown has a bias rate of 0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchyard.benchmarks.loader import load_benchmark
from benchyard.pairwise import PairwiseRefused, compare_pairwise, parse_choice
from benchyard.providers.judge import judge_settings
from benchyard.store.records import RunRecord
from benchyard.store.store import Store
from tests.integration.speed.conftest import StartFake
from tests.support import Cli, attempt_record, run_record, write_benchmark

SCENARIOS = 6


def _runs(store: Store, root: Path) -> tuple[RunRecord, RunRecord]:
    """Run A answers "weak answer N", run B "strong answer N", to the same six scenarios."""
    bench = write_benchmark(
        root,
        [
            {"id": f"q{i}", "category": "math" if i % 2 else "prose", "stimulus": f"question {i}",
             "reference": "right", "checks": [{"type": "equals", "value": "right"}]}
            for i in range(SCENARIOS)
        ],
    )  # fmt: skip
    loaded = load_benchmark(bench)
    runs = []
    for run_id, word in (("a" * 16, "weak"), ("b" * 16, "strong")):
        run = run_record(
            run_id,
            benchmark_name=loaded.name,
            benchmark_version=loaded.version,
            benchmark_hash=loaded.content_hash,
            benchmark_path=str(loaded.root),
            agent_name=f"agent-{word}",
        )
        store.create_run(run)
        store.record_attempts(
            [
                attempt_record(run_id, f"{run_id[:8]}{i:08d}", f"q{i}", answer=f"{word} answer {i}",
                               verdict="failed", category="math" if i % 2 else "prose")
                for i in range(SCENARIOS)
            ]
        )  # fmt: skip
        runs.append(run)
    return runs[0], runs[1]


def _judge(url: str) -> dict[str, Any] | None:
    providers = {"judge": {"base_url": url, "max_retries": 1, "retry_backoff_sec": 0.01}}
    return judge_settings({"provider": "judge", "model": "judge-model"}, providers, {})


def test_a_judge_that_always_prefers_the_first_answer(
    fake_llm: StartFake, store: Store, tmp_path: Path
) -> None:
    judge = fake_llm({"default": {"content": '{"better": "1", "reason": "it came first"}'}})
    run_a, run_b = _runs(store, tmp_path / "bench")

    result = compare_pairwise(store, run_a, run_b, _judge(judge.url))

    assert result.judged == SCENARIOS and len(judge.requests) == 2 * SCENARIOS
    assert (result.wins_a, result.wins_b, result.ties) == (0, 0, SCENARIOS)
    assert result.position_bias_rate == 1.0
    assert result.consistency_rate == 0.0
    assert result.b_win_share is None and result.sign_test_p == 1.0
    assert result.position_bias_ci95 is not None and result.position_bias_ci95[1] == 1.0
    assert all(
        v.a_first == "a" and v.b_first == "b" and v.position_biased for v in result.scenarios
    )


def test_a_judge_that_prefers_the_better_answer_wherever_it_is(
    fake_llm: StartFake, store: Store, tmp_path: Path
) -> None:
    judge = fake_llm(
        {
            "replies": [
                {
                    "regex": "Answer 1:\\n<<<\\nstrong",
                    "content": '{"better": "1", "reason": "strong"}',
                },
                {
                    "regex": "Answer 2:\\n<<<\\nstrong",
                    "content": '{"better": "2", "reason": "strong"}',
                },
            ]
        }
    )
    run_a, run_b = _runs(store, tmp_path / "bench")

    result = compare_pairwise(store, run_a, run_b, _judge(judge.url))

    assert (result.wins_a, result.wins_b, result.ties) == (0, SCENARIOS, 0)
    assert result.position_bias_rate == 0.0 and result.consistency_rate == 1.0
    assert result.b_win_share == 1.0
    assert result.b_win_share_ci95 is not None and result.b_win_share_ci95[0] > 0.5
    assert result.sign_test_p < 0.05
    assert result.categories["math"].b == 3 and result.categories["prose"].b == 3
    # the judge is asked about several scenarios at once: its first request may be any of them
    shown = [request["messages"][1]["content"] for request in judge.requests]
    about_first = [prompt for prompt in shown if "<<<\nquestion 0\n>>>" in prompt]
    assert len(about_first) == 2  # the pair in both orders
    assert all("A reference answer" in prompt and "right" in prompt for prompt in about_first)


def test_unreadable_judge_replies_are_errors_not_verdicts(
    fake_llm: StartFake, store: Store, tmp_path: Path
) -> None:
    judge = fake_llm({"default": {"content": "I think the second one, probably."}})
    run_a, run_b = _runs(store, tmp_path / "bench")
    settings = _judge(judge.url)
    assert settings is not None
    settings["parse_retries"] = 0

    result = compare_pairwise(store, run_a, run_b, settings, limit=2)

    assert result.judged == 0 and result.errors == 2 and result.skipped == SCENARIOS - 2
    assert "unparseable judge reply" in (result.scenarios[0].error or "")


def test_pairwise_refusals(store: Store, tmp_path: Path) -> None:
    run_a, run_b = _runs(store, tmp_path / "bench")
    with pytest.raises(PairwiseRefused, match="needs a judge model"):
        compare_pairwise(store, run_a, run_b, None)
    other = run_record("c" * 16, benchmark_name="other")
    store.create_run(other)
    with pytest.raises(PairwiseRefused, match="judge runs of one benchmark"):
        compare_pairwise(store, run_a, other, None)


def test_parse_choice() -> None:
    assert parse_choice('```json\n{"better": "2", "reason": "x"}\n```') == ("2", "x")
    assert parse_choice('{"better": "Answer 1"}') == ("1", "")
    assert parse_choice('{"better": "TIE"}')[0] == "tie"
    with pytest.raises(ValueError, match="not 1, 2 or tie"):
        parse_choice('{"better": "both"}')


def test_pairwise_through_the_cli(fake_llm: StartFake, cli: Cli, store: Store) -> None:
    judge = fake_llm({"default": {"content": '{"better": "1", "reason": "first"}'}})
    config = {
        "providers": {"judge": {"base_url": judge.url}},
        "judge": {"provider": "judge", "model": "j"},
    }
    (cli.cwd / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    _runs(store, cli.cwd / "bench")

    table = cli("pairwise", "aaaaaaaa", "bbbbbbbb")
    assert table.exit_code == 0, table.output
    assert "position bias 100.0%" in table.output
    payload = json.loads(cli("pairwise", "aaaa", "bbbb", "--format", "json").output)
    assert payload["position_bias_rate"] == 1.0 and payload["ties"] == SCENARIOS
    markdown = cli("pairwise", "aaaa", "bbbb", "--format", "md").output
    assert markdown.startswith("# Pairwise judgement") and "| prose | 0 | 0 | 3 |" in markdown
