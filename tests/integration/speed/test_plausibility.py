"""Each plausibility rule fires on a fake endpoint built to trigger it and stays silent on an honest
one; all over real HTTP. The margins are tenfold, and nothing here asserts a timing."""

from __future__ import annotations

from typing import Any

import pytest

from benchyard.speed.records import load_samples
from benchyard.store.store import Store
from tests.integration.speed.conftest import WORDS, Measure, StartFake

# The rules; the store only records the samples they read. The tokenizer's count is a column of
# its own: that test is kept in the PostgreSQL half.
pytestmark = pytest.mark.store_in_passing

GB = 1_000_000_000


def honest(**extra: Any) -> dict[str, Any]:
    """Streams 24 words, one per chunk, 20 ms apart (50 tokens/s), after 100 ms."""
    return {"default": {"content": WORDS, "delay_sec": 0.1, "chunk_delay_sec": 0.02, **extra}}


def rules(report: Any) -> set[str]:
    return {finding.rule for finding in report.findings}


def test_an_honest_endpoint_trips_no_rule(fake_llm: StartFake, measure: Measure) -> None:
    llm = fake_llm({**honest(), "models": [{"id": "fake", "meta": {"size": 10 * GB}}]})
    run, report = measure(llm.url, bandwidth_gbs=3350)  # bound: 335 tokens/s

    assert run.status == "finished"
    # no rule about the endpoint fires; a loaded machine may stall this client (a note)
    assert rules(report) <= {"client_stall"}
    assert not [f for f in report.findings if f.severity == "implausible"]
    assert report.confidence.level in ("HIGH", "MEDIUM")
    assert report.environment.model_size_bytes == 10 * GB
    assert "/v1/models" in (report.environment.model_size_source or "")
    assert all(f.decode_tps is not None and f.ttft_sec is not None for f in report.lengths)
    assert report.usage_sources == {"stream": report.samples}


def test_decode_faster_than_memory_bandwidth_allows(fake_llm: StartFake, measure: Measure) -> None:
    llm = fake_llm(honest())
    _, report = measure(llm.url, model_size_gb=10, bandwidth_gbs=50)  # bound: 5 tokens/s

    found = [f for f in report.findings if f.rule == "decode_over_bandwidth"]
    assert found and all(f.severity == "implausible" for f in found)
    assert "memory bandwidth" in found[0].message and "--model-size-gb" in found[0].message
    assert report.confidence.level == "LOW"


def test_first_token_before_the_round_trip(fake_llm: StartFake, measure: Measure) -> None:
    """A server 500 ms away (its GET /v1/models takes that long) whose chat tokens come back
    at once: something in between answered."""
    llm = fake_llm({"default": {"content": WORDS}, "probe_delay_sec": 0.5})
    _, report = measure(llm.url, concurrency=[1])

    assert "ttft_below_rtt" in rules(report)
    assert report.environment.rtt_sec is not None and report.environment.rtt_sec >= 0.5
    assert report.confidence.level == "LOW"


def test_a_warm_prompt_cache_is_a_note_with_new_prompts(
    fake_llm: StartFake, measure: Measure
) -> None:
    """New prompts each call: the measured figures are cold; the repeated probe shows the cache."""
    llm = fake_llm(honest(delay_sec=0.4, cached_delay_sec=0.0))
    _, report = measure(llm.url, concurrency=[1])

    cache = [f for f in report.findings if f.rule == "warm_cache"]
    assert [f.severity for f in cache] == ["note"]
    assert "caches prompts" in cache[0].message
    assert report.confidence.level != "LOW"


def test_a_warm_prompt_cache_makes_repeated_prompts_implausible(
    fake_llm: StartFake, measure: Measure
) -> None:
    llm = fake_llm(honest(delay_sec=0.4, cached_delay_sec=0.0))
    _, report = measure(llm.url, concurrency=[1], same_prompt=True)

    cache = [f for f in report.findings if f.rule == "warm_cache"]
    assert cache and all(f.severity == "implausible" for f in cache)
    assert "--same-prompt" in cache[0].message
    assert report.confidence.level == "LOW"


def test_no_cache_no_cache_finding_even_with_repeated_prompts(
    fake_llm: StartFake, measure: Measure
) -> None:
    llm = fake_llm(honest(delay_sec=0.2))
    _, report = measure(llm.url, concurrency=[1], same_prompt=True)

    assert "warm_cache" not in rules(report)


def test_tokens_in_bursts(fake_llm: StartFake, measure: Measure) -> None:
    """200 tokens reported, 24 chunks streamed: a buffer emptied, not a model decoding."""
    llm = fake_llm(honest(completion_tokens=200))
    _, report = measure(llm.url, concurrency=[1])

    burst = [f for f in report.findings if f.rule == "buffered_stream"]
    assert burst and "200 tokens in 24 chunks" in burst[0].message
    assert report.confidence.level == "LOW"


# ---- issue 22, item 10: counts benchyard makes itself ------------------------------------------

GARBAGE = " ".join(f"q{i}xz{i * 7 % 13}kv" for i in range(48))


def test_usage_over_reported_threefold_is_implausible_without_size_or_bandwidth(
    fake_llm: StartFake, measure: Measure
) -> None:
    """The server streams 24 words and claims 72 tokens (3x: 121 tokens/s for 40 true). No model
    size, no bandwidth: the reply's own words bound its tokens, so the figures are LOW, not
    MEDIUM."""
    llm = fake_llm(honest(completion_tokens=72))
    _, report = measure(llm.url, concurrency=[1])

    found = [f for f in report.findings if f.rule == "usage_outside_bounds"]
    assert found and found[0].severity == "implausible"
    assert "more reply tokens than their text allows" in found[0].message
    assert report.confidence.level == "LOW"


def test_usage_that_matches_the_text_trips_nothing(fake_llm: StartFake, measure: Measure) -> None:
    llm = fake_llm(honest(completion_tokens=31))  # 1.3 tokens a word, as a real tokenizer
    _, report = measure(llm.url, concurrency=[1])
    assert {"usage_outside_bounds", "off_topic"}.isdisjoint(rules(report))


def test_garbage_streamed_fast_is_not_decoding(fake_llm: StartFake, measure: Measure) -> None:
    """48 nonsense words at once (thousands of tokens/s): not an answer to the prompt."""
    llm = fake_llm({"default": {"content": GARBAGE}})
    _, report = measure(llm.url, concurrency=[1])

    found = [f for f in report.findings if f.rule == "off_topic"]
    assert found and found[0].severity == "implausible"
    assert "not answers to the prompt" in found[0].message
    assert report.confidence.level == "LOW"


def test_a_blob_claimed_as_one_token_is_out_of_bounds(
    fake_llm: StartFake, measure: Measure
) -> None:
    """400 characters without a space, reported as 1 token: fewer than any tokenizer allows."""
    llm = fake_llm({"default": {"content": "abcdefghij" * 40, "completion_tokens": 1}})
    _, report = measure(llm.url, concurrency=[1])
    found = [f for f in report.findings if f.rule == "usage_outside_bounds"]
    assert found and "fewer reply tokens" in found[0].message


@pytest.mark.store_half
def test_the_server_s_own_tokenizer_checks_usage_more_tightly(
    fake_llm: StartFake, measure: Measure, store: Store
) -> None:
    """A server with POST /tokenize (llama.cpp's): its count of the reply is the bound. 30 tokens
    claimed for 24 words is within what words allow (2.5 a word) but 25% over the tokenizer's."""
    llm = fake_llm({**honest(completion_tokens=30), "tokenizer": True})
    run, report = measure(llm.url, concurrency=[1])

    assert {s.tokenizer_tokens for s in load_samples(store, run.id) if s.phase != "warmup"} == {24}
    found = [f for f in report.findings if f.rule == "usage_outside_bounds"]
    assert found and "by the server's own tokenizer" in found[0].message
    assert report.confidence.level == "LOW"

    without = fake_llm(honest(completion_tokens=30))  # no tokenizer: within the bounds
    assert "usage_outside_bounds" not in rules(measure(without.url, concurrency=[1])[1])
    exact = fake_llm({**honest(), "tokenizer": True})  # usage = the tokenizer's count
    assert "usage_outside_bounds" not in rules(measure(exact.url, concurrency=[1])[1])
