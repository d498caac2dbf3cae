"""Speed runs: the reasoning/answer split of the time to first token, token counts from the
endpoint (streamed, or from an unstreamed twin), and speed runs in the store through the CLI:
`speed`, `runs`, `show`, `report` (table, JSON, Markdown, and speed next to ability), `compare`,
and refusals where a speed run has nothing to give."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from benchyard.speed.records import load_samples
from benchyard.store.store import Store
from tests.integration.speed.conftest import WORDS, Measure, StartFake
from tests.support import Cli, write_benchmark

THINKING = " ".join(f"t{i}" for i in range(12))


def test_reasoning_and_answer_each_have_their_first_token(
    fake_llm: StartFake, measure: Measure, store: Store
) -> None:
    """12 reasoning words, then 24 answer words, one chunk each: the first reasoning token comes
    before the first answer token, and the time to first token is the reasoning's."""
    llm = fake_llm({"default": {"content": WORDS, "reasoning": THINKING, "chunk_delay_sec": 0.01}})
    run, report = measure(llm.url, concurrency=[1])

    for sample in load_samples(store, run.id):
        assert sample.reasoning_ttft_sec is not None and sample.content_ttft_sec is not None
        assert sample.reasoning_ttft_sec < sample.content_ttft_sec
        assert sample.ttft_sec == sample.reasoning_ttft_sec
        assert sample.token_chunks == 36
        assert sample.reasoning_tokens == 12 and sample.tokens_out == 36
    for figures in report.lengths:
        assert figures.reasoning_ttft_sec is not None and figures.content_ttft_sec is not None
        assert figures.reasoning_ttft_sec.median < figures.content_ttft_sec.median


def test_without_reasoning_there_is_no_reasoning_time(
    fake_llm: StartFake, measure: Measure
) -> None:
    llm = fake_llm({"default": {"content": WORDS}})
    _, report = measure(llm.url, concurrency=[1])

    assert all(f.reasoning_ttft_sec is None for f in report.lengths)
    assert all(f.content_ttft_sec is not None for f in report.lengths)


def test_token_counts_come_from_the_endpoint_never_guessed(
    fake_llm: StartFake, measure: Measure, store: Store
) -> None:
    """Usage as the endpoint reports it (here scripted: 77 prompt and 31 reply tokens for 24
    words streamed), not a count of words or chunks."""
    llm = fake_llm({"default": {"content": WORDS, "prompt_tokens": 77, "completion_tokens": 31}})
    run, _ = measure(llm.url, concurrency=[1])

    samples = [s for s in load_samples(store, run.id) if s.error is None]
    assert {(s.tokens_in, s.tokens_out, s.usage_source) for s in samples} == {(77, 31, "stream")}


def test_usage_missing_from_the_stream_comes_from_an_unstreamed_twin(
    fake_llm: StartFake, measure: Measure, store: Store
) -> None:
    """llama-cpp-python's server reports usage only in whole replies: each measured call is sent
    again unstreamed, and its usage counts (the replies are the same)."""
    llm = fake_llm({"default": {"content": WORDS, "completion_tokens": 24, "stream_usage": False}})
    run, report = measure(llm.url, concurrency=[1])

    streamed = [body for body in llm.requests if body.get("stream")]
    whole = [body for body in llm.requests if not body.get("stream")]
    every = load_samples(store, run.id)
    # every kept streamed call has its twin; a call taken again (the client stalled during it,
    # as on a loaded machine) or retried sent more than one streamed request
    assert len(whole) == len(streamed) - sum(s.retakes + s.retries for s in every)
    samples = [s for s in every if s.phase != "warmup"]
    assert {s.usage_source for s in samples} == {"twin"}
    assert {s.tokens_out for s in samples} == {24}
    assert report.usage_sources == {"twin": report.samples}
    assert all(f.decode_tps is not None for f in report.lengths)


def test_no_usage_at_all_is_said_and_rates_are_left_out(
    fake_llm: StartFake, measure: Measure
) -> None:
    llm = fake_llm({"default": {"content": WORDS, "usage": False}})
    _, report = measure(llm.url, concurrency=[1])

    assert all(f.decode_tps is None and f.prefill_tps is None for f in report.lengths)
    assert report.usage_sources == {"none": report.samples}
    assert any("without token usage" in reason for reason in report.confidence.reasons)


def _project(directory: Path, url: str) -> None:
    config = {
        "providers": {"fake": {"base_url": url, "max_retries": 1, "retry_backoff_sec": 0.01}},
        "agents": {
            "model": {"kind": "openai", "provider": "fake", "model": "fake"},
            "echo": {"kind": "command", "command": "cat"},
        },
    }
    (directory / "benchyard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


SPEED_ARGS = (
    "speed", "--agent", "model", "--lengths", "short=20,long=60", "--repeats", "2",
    "--warmup", "0", "--concurrency", "1,2", "--rounds", "1", "-q",
)  # fmt: skip


def test_speed_runs_through_the_cli(fake_llm: StartFake, cli: Cli) -> None:
    # 50 ms before the first token: after the round trip (else `speed` exits 1, ttft_below_rtt)
    llm = fake_llm({"default": {"content": WORDS, "delay_sec": 0.05, "chunk_delay_sec": 0.002}})
    _project(cli.cwd, llm.url)

    for _ in range(2):
        measured = cli(*SPEED_ARGS)
        assert measured.exit_code == 0, measured.output
        assert measured.output.startswith("run ") and "(finished)" in measured.output

    listed = cli("runs")
    assert listed.output.count("speed 1") == 2
    assert "8/8" in listed.output and "calls" in listed.output  # 2 x 2, a probe, 1 + 2

    table = cli("report", "latest")
    assert "by prompt length" in table.output and "concurrency sweep" in table.output
    assert "confidence" in table.output

    payload = json.loads(cli("report", "latest", "--format", "json").output)
    assert payload["kind"] == "speed"
    assert [f["label"] for f in payload["lengths"]] == ["short", "long"]
    assert [level["concurrency"] for level in payload["concurrency"]] == [1, 2]
    stats = payload["lengths"][0]["ttft_sec"]
    assert set(stats) == {"n", "mean", "median", "p95", "stdev", "min", "max"}

    markdown = cli("report", "latest", "--format", "md").output
    assert "### By prompt length" in markdown and "**Confidence" in markdown

    shown = cli("show", "latest")
    assert "length" in shown.output and "probe" in shown.output and "c2" in shown.output
    shown_json = json.loads(cli("show", "latest", "--format", "json").output)
    assert len(shown_json["samples"]) == 8

    compared = cli("compare", "latest~1", "latest", "--format", "json")
    assert compared.exit_code == 0, compared.output
    comparison = json.loads(compared.output)
    figures = [delta["figure"] for delta in comparison["candidates"][0]["deltas"]]
    assert "TTFT ms (short)" in figures and "decode tok/s (long)" in figures
    assert "ratio" in compared.output

    refused = cli("rerun", "latest", "--failed")
    assert refused.exit_code == 2 and "speed run" in refused.output
    rescored = cli("rescore", "latest")
    assert rescored.exit_code == 2 and "speed run" in rescored.output


def test_speed_next_to_ability_in_one_table(fake_llm: StartFake, cli: Cli) -> None:
    llm = fake_llm(
        {
            "replies": [{"match": "2+2?", "content": "4"}, {"match": "say hi", "content": "hello"}],
            "default": {"content": WORDS, "delay_sec": 0.05, "chunk_delay_sec": 0.001},
        }
    )
    _project(cli.cwd, llm.url)
    bench = write_benchmark(
        cli.cwd / "bench",
        [
            {"id": "m1", "category": "math", "stimulus": "2+2?", "reference": "4",
             "checks": [{"type": "equals", "value": "4"}]},
            {"id": "w1", "category": "words", "stimulus": "say hi", "reference": "hi",
             "checks": [{"type": "equals", "value": "hi"}]},
        ],
    )  # fmt: skip
    ran = cli("run", str(bench), "--agent", "model", "-q")
    assert ran.exit_code == 0, ran.output
    assert cli(*SPEED_ARGS).exit_code == 0

    table = json.loads(cli("report", "latest~1", "latest", "--format", "json").output)
    assert table["kind"] == "models"
    assert table["columns"] == ["fixture-bench/math", "fixture-bench/words"]
    (row,) = table["rows"]
    assert row["agent"] == "model" and row["confidence"] in ("HIGH", "MEDIUM", "LOW")
    assert row["ttft_ms"] is not None and row["decode_tps"] is not None
    assert row["ability"]["fixture-bench/math"]["raw"] == "1/1"
    assert row["ability"]["fixture-bench/words"]["raw"] == "0/1"
    markdown = cli("report", "latest~1", "latest", "--format", "md").output
    assert "| model | fake |" in markdown and "fixture-bench/math" in markdown

    mixed = cli("compare", "latest~1", "latest")
    assert mixed.exit_code == 2 and "benchmark run" in mixed.output


def test_speed_refuses_what_it_cannot_time(fake_llm: StartFake, cli: Cli) -> None:
    llm = fake_llm({"default": {"content": "x"}})
    _project(cli.cwd, llm.url)

    command = cli("speed", "--agent", "echo")
    assert command.exit_code == 2 and "kind command" in command.output

    bad = cli("speed", "--agent", "model", "--lengths", "short=abc")
    assert bad.exit_code == 2 and "LABEL=WORDS" in bad.output
    unknown = cli("speed", "--agent", "model", "--hardware", "abacus")
    assert unknown.exit_code == 2 and "h100-sxm" in unknown.output
    level = cli("speed", "--agent", "model", "--concurrency", "0")
    assert level.exit_code == 2 and "at least 1" in level.output


def test_a_rejected_request_fails_the_run_and_says_why(fake_llm: StartFake, cli: Cli) -> None:
    llm = fake_llm({"default": {"status": 404, "content": "model 'fake' not found"}})
    _project(cli.cwd, llm.url)

    command = cli("speed", "--agent", "model", "-q")
    assert command.exit_code == 2 and "not found" in command.output
    listed = cli("show", "latest")
    assert "failed: " in listed.output and "not found" in listed.output
