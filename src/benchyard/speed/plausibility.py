"""Plausibility: figures that cannot be true, and why; and how far the figures can be trusted.

Rules (docs/speed.md):

- `decode_over_bandwidth`: at one request at a time, each generated token reads every weight
  once, so decode speed cannot exceed memory bandwidth / model size.
- `ttft_below_rtt`: no first token can arrive sooner than a round trip to the endpoint.
- `warm_cache`: a prompt sent again answered much faster than the first time: a prompt cache.
  Measured figures are affected only when the run repeats prompts (`--same-prompt`); otherwise
  the finding is a note about the endpoint.
- `buffered_stream`: the reply's tokens came in far fewer chunks than tokens, so the "decode
  speed" is the speed of a burst from a buffer, not of generation.
- `usage_outside_bounds`: the endpoint's count of reply tokens is outside what the reply's own
  characters and words allow (counted by benchyard): a server that over-reports usage inflates
  every speed figure.
- `off_topic`: the replies are not answers to the prompt (too few of their words are ones a
  journal in English uses): garbage streamed fast is not decoding.
- `client_stall`: this client's event loop was late while it read a call's chunks (a note for
  the calls taken again; a doubt for those kept stalled).

Confidence: LOW when a figure is implausible; MEDIUM when a check could not be made or the
figures are noisy; HIGH otherwise. Every reason is listed."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence

from benchyard.speed.models import (
    Confidence,
    Environment,
    Finding,
    LengthFigures,
    Sample,
    SpeedOptions,
)
from benchyard.speed.prompts import ON_TOPIC_MIN_WORDS, ON_TOPIC_SHARE

BANDWIDTH_SLACK = 1.05  # vendors' peak figures are rounded; stay clear of false alarms
CACHE_SPEEDUP = 2.0  # a repeat this many times faster than the first call...
CACHE_MIN_SAVED_SEC = 0.02  # ... and at least this much faster
RTT_SLACK_SEC = 0.001
BURST_TOKENS_PER_CHUNK = 4.0
BURST_MIN_TOKENS = 16
NOISY = 0.25  # stdev / mean above this is noisy
# Bounds on a reply's tokens from its text: every token of a byte-level vocabulary is a byte or
# more (a character is at most 4 bytes in UTF-8); no tokenizer spends more than 2.5 tokens on a
# word of English prose on average, nor covers more than 12 characters of it per token.
BYTES_PER_CHAR = 4
TOKENS_PER_PROSE_WORD = 2.5
CHARS_PER_TOKEN_MAX = 12
TOKEN_SLACK = 4  # special tokens (end of turn) and short replies
TOKENIZER_SLACK = 0.10  # usage within 10% of the server's own tokenizer's count
ODD_SHARE = 0.25  # a rule on calls fires when this share of them is off
STALL_MIN_SEC = 0.05  # a call during which the client's loop lagged this much...
STALL_SHARE = 0.02  # ... and this share of the call's time, was timed late by the client


def stalled(sample: Sample) -> bool:
    """Whether the client's event loop lagged enough during the call to have timed it late."""
    lag = sample.client_lag_sec or 0.0
    return lag >= max(STALL_MIN_SEC, STALL_SHARE * (sample.total_sec or 0.0))


MIN_REPEATS = 3


def findings(
    samples: Sequence[Sample],
    options: SpeedOptions,
    environment: Environment,
    lengths: Sequence[LengthFigures],
) -> list[Finding]:
    measured = [s for s in samples if s.phase != "warmup" and s.error is None]
    return [
        *_decode_over_bandwidth(lengths, environment),
        *_ttft_below_rtt(measured, environment),
        *_warm_cache(measured, options),
        *_buffered_stream(measured),
        *_usage_outside_bounds(measured),
        *_off_topic(measured),
        *_retaken(measured),
    ]


def token_bounds(sample: Sample) -> tuple[int, int] | None:
    """The fewest and most reply tokens the reply's own text allows (None when not counted): by
    the server's own tokenizer where it has one (within 10%, or TOKEN_SLACK for end-of-turn
    tokens), else from its characters and words."""
    if sample.tokenizer_tokens is not None:
        slack = max(TOKEN_SLACK, math.ceil(TOKENIZER_SLACK * sample.tokenizer_tokens))
        return max(0, sample.tokenizer_tokens - slack), sample.tokenizer_tokens + slack
    chars, words = sample.reply_chars, sample.reply_words
    if chars is None or words is None:
        return None
    high = BYTES_PER_CHAR * chars
    if on_topic(sample) is True:  # prose: its words bound it more tightly
        high = min(high, math.ceil(TOKENS_PER_PROSE_WORD * words))
    low = max(0, math.floor(chars / CHARS_PER_TOKEN_MAX) - TOKEN_SLACK)
    return low, high + TOKEN_SLACK


def counted_tokens(sample: Sample) -> int | None:
    """The reply tokens the usage claims for the text streamed: reasoning tokens a server counts
    but never streams are left out."""
    if sample.tokens_out is None:
        return None
    if sample.reasoning_tokens and sample.reasoning_ttft_sec is None:
        return max(0, sample.tokens_out - sample.reasoning_tokens)
    return sample.tokens_out


def on_topic(sample: Sample) -> bool | None:
    """Whether the reply answers the prompt (None: too short to judge, or not counted)."""
    words, hits = sample.reply_words, sample.expected_words
    if words is None or hits is None or sample.reply_chars is None:
        return None
    if words < ON_TOPIC_MIN_WORDS and sample.reply_chars < 8 * ON_TOPIC_MIN_WORDS:
        return None
    return hits >= ON_TOPIC_SHARE * max(1, words)


def _usage_outside_bounds(measured: Sequence[Sample]) -> list[Finding]:
    judged: list[tuple[Sample, int, tuple[int, int]]] = []
    for sample in measured:
        claimed, bounds = counted_tokens(sample), token_bounds(sample)
        if claimed is not None and bounds is not None:
            judged.append((sample, claimed, bounds))
    outside = [j for j in judged if not j[2][0] <= j[1] <= j[2][1]]
    if not judged or len(outside) < ODD_SHARE * len(judged):
        return []
    sample, claimed, (low, high) = outside[0]
    side = "more" if claimed > high else "fewer"
    how = "by the server's own tokenizer" if sample.tokenizer_tokens is not None else "from them"
    return [
        Finding(
            rule="usage_outside_bounds",
            severity="implausible",
            figure="decode and prefill tokens/s",
            message=f"{len(outside)} of {len(judged)} calls' usage claims {side} reply tokens "
            f"than their text allows (e.g. {claimed} tokens for {sample.reply_chars} characters "
            f"and {sample.reply_words} words; {low} to {high} {how}): the endpoint "
            "miscounts its tokens, so every speed figure built on them is off by as much",
        )
    ]


def _off_topic(measured: Sequence[Sample]) -> list[Finding]:
    judged = [s for s in measured if on_topic(s) is not None]
    off = [s for s in judged if on_topic(s) is False]
    if not judged or len(off) < ODD_SHARE * len(judged):
        return []
    example = off[0]
    return [
        Finding(
            rule="off_topic",
            severity="implausible",
            figure="decode tokens/s",
            message=f"{len(off)} of {len(judged)} replies are not answers to the prompt (e.g. "
            f"{example.expected_words} of {example.reply_words} words are ones a journal in "
            "English uses): text streamed that answers nothing is not a model decoding, and "
            "its speed is not a decode speed",
        )
    ]


def _retaken(measured: Sequence[Sample]) -> list[Finding]:
    retaken = [s for s in measured if s.retakes]
    if not retaken:
        return []
    return [
        Finding(
            rule="client_stall",
            severity="note",
            figure="every figure",
            message=f"{sum(s.retakes for s in retaken)} take(s) of {len(retaken)} call(s) were "
            "thrown away and the calls taken again: this client's event loop was late while "
            "reading them, which delays the chunks' timestamps whatever the server did",
        )
    ]


def _decode_over_bandwidth(
    lengths: Sequence[LengthFigures], environment: Environment
) -> list[Finding]:
    size, bandwidth = environment.model_size_bytes, environment.bandwidth_bytes_per_sec
    if not size or not bandwidth:
        return []
    bound = bandwidth / size
    found = []
    for figures in lengths:
        if figures.decode_tps is None or figures.decode_tps.median <= bound * BANDWIDTH_SLACK:
            continue
        found.append(
            Finding(
                rule="decode_over_bandwidth",
                severity="implausible",
                figure=f"decode tokens/s ({figures.label})",
                message=f"decode {figures.decode_tps.median:,.0f} tokens/s is above the "
                f"{bound:,.0f} tokens/s that {bandwidth / 1e9:,.0f} GB/s of memory bandwidth "
                f"allows for {size / 1e9:,.2f} GB of weights ({environment.bandwidth_source}; "
                f"size from {environment.model_size_source}): each token generated reads every "
                "weight once, so the endpoint serves a smaller model than stated, decodes "
                "speculatively, or reports tokens it did not generate",
            )
        )
    return found


def _ttft_below_rtt(measured: Sequence[Sample], environment: Environment) -> list[Finding]:
    rtt = environment.rtt_sec
    if rtt is None:
        return []
    by_label: dict[str, list[float]] = defaultdict(list)
    for sample in measured:
        if sample.ttft_sec is not None and sample.ttft_sec < rtt - RTT_SLACK_SEC:
            by_label[sample.label].append(sample.ttft_sec)
    return [
        Finding(
            rule="ttft_below_rtt",
            severity="implausible",
            figure=f"time to first token ({label})",
            message=f"{len(fast)} call(s) had their first token after {min(fast) * 1000:,.1f} ms, "
            f"less than the {rtt * 1000:,.1f} ms round trip to the endpoint: no token can come "
            "back before the request arrives, so something between answered (a cache or proxy) "
            "or the stream's first chunk held no real token",
        )
        for label, fast in by_label.items()
    ]


def _warm_cache(measured: Sequence[Sample], options: SpeedOptions) -> list[Finding]:
    groups: dict[str, list[Sample]] = defaultdict(list)
    for sample in sorted(measured, key=lambda s: s.position):
        if sample.phase in ("length", "probe") and sample.ttft_sec is not None:
            groups[sample.prompt_key].append(sample)
    found = []
    for group in groups.values():
        if len(group) < 2:
            continue
        cold = group[0].ttft_sec
        warm = statistics.median(s.ttft_sec for s in group[1:] if s.ttft_sec is not None)
        assert cold is not None
        if cold < warm * CACHE_SPEEDUP or cold - warm < CACHE_MIN_SAVED_SEC:
            continue
        speedup = f"{cold / warm:,.1f}x" if warm > 0 else "infinitely"
        shown = f"first token {cold * 1000:,.0f} ms -> {warm * 1000:,.0f} ms"
        if options.same_prompt:
            found.append(
                Finding(
                    rule="warm_cache",
                    severity="implausible",
                    figure=f"time to first token and prefill ({group[0].label})",
                    message=f"the repeated prompt was answered {speedup} faster than the first "
                    f"time ({shown}): a prompt cache served the repeats, so these figures are "
                    "not the prefill of a new prompt; measure without --same-prompt",
                )
            )
        else:
            found.append(
                Finding(
                    rule="warm_cache",
                    severity="note",
                    figure="prompt cache",
                    message=f"a prompt sent again was answered {speedup} faster ({shown}): the "
                    "endpoint caches prompts. benchyard's figures come from new prompts; a figure "
                    "measured by repeating one prompt would be a cache's",
                )
            )
    return found


def _buffered_stream(measured: Sequence[Sample]) -> list[Finding]:
    burst = [
        s
        for s in measured
        if s.tokens_out is not None
        and s.tokens_out >= BURST_MIN_TOKENS
        and s.token_chunks * BURST_TOKENS_PER_CHUNK < s.tokens_out
    ]
    if not burst:
        return []
    example = burst[0]
    return [
        Finding(
            rule="buffered_stream",
            severity="implausible",
            figure="decode tokens/s",
            message=f"{len(burst)} of {len(measured)} calls streamed their tokens in bursts "
            f"(e.g. {example.tokens_out} tokens in {example.token_chunks} chunks): something "
            "buffered the stream, so the decode speed measured is how fast a buffer was "
            "emptied, not how fast the model generated",
        )
    ]


def confidence(
    samples: Sequence[Sample],
    options: SpeedOptions,
    environment: Environment,
    lengths: Sequence[LengthFigures],
    found: Sequence[Finding],
) -> Confidence:
    implausible = [f for f in found if f.severity == "implausible"]
    doubts = _doubts(samples, options, environment, lengths)
    if implausible:
        rules = ", ".join(dict.fromkeys(f.rule for f in implausible))
        return Confidence(
            level="LOW", reasons=[f"implausible figures ({rules}): see the findings", *doubts]
        )
    if doubts:
        return Confidence(level="MEDIUM", reasons=doubts)
    return Confidence(
        level="HIGH",
        reasons=[
            "every rule checked and none fired: decode under the bandwidth bound, first tokens "
            "after the round trip, no warm cache in the figures, tokens streamed one by one",
            "token counts from the endpoint's usage; figures steady across repeats",
        ],
    )


def _doubts(
    samples: Sequence[Sample],
    options: SpeedOptions,
    environment: Environment,
    lengths: Sequence[LengthFigures],
) -> list[str]:
    measured = [s for s in samples if s.phase != "warmup"]
    doubts = []
    failed = [s for s in measured if s.error is not None]
    if failed:
        doubts.append(f"{len(failed)} of {len(measured)} calls failed (see the errors)")
    retried = sum(1 for s in measured if s.retries)
    if retried:
        doubts.append(f"{retried} calls were retried after a provider fault")
    ok = [s for s in measured if s.error is None]
    no_usage = sum(1 for s in ok if s.usage_source == "none")
    if no_usage:
        doubts.append(
            f"{no_usage} calls came back without token usage (even unstreamed): their decode "
            "and prefill speeds are not computed"
        )
    differs = sum(1 for s in ok if s.usage_source == "twin_differs")
    if differs:
        doubts.append(
            f"{differs} calls' token counts come from an unstreamed twin whose reply differed"
        )
    if not environment.model_size_bytes or not environment.bandwidth_bytes_per_sec:
        missing = [
            what
            for what, value in (
                ("the model's size (--model-size-gb)", environment.model_size_bytes),
                (
                    "the memory bandwidth (--bandwidth-gbs or --hardware)",
                    environment.bandwidth_bytes_per_sec,
                ),
            )
            if not value
        ]
        doubts.append(
            f"decode speed not checked against memory bandwidth: no {' nor '.join(missing)}"
        )
    late = [s for s in ok if stalled(s)]
    if late:
        worst = max(s.client_lag_sec or 0.0 for s in late)
        doubts.append(
            f"{len(late)} calls were measured while this client stalled (its event loop up to "
            f"{worst * 1000:,.0f} ms late): their times include the client's"
        )
    if environment.rtt_sec is None:
        doubts.append("the round trip to the endpoint could not be measured (GET /v1/models)")
    if options.repeats < MIN_REPEATS:
        doubts.append(f"only {options.repeats} call(s) per prompt length")
    for figures in lengths:
        for name, stats in (
            ("time to first token", figures.ttft_sec),
            ("decode speed", figures.decode_tps),
        ):
            if stats is None or stats.stdev is None or stats.n < MIN_REPEATS or not stats.mean:
                continue
            spread = stats.stdev / stats.mean
            if spread > NOISY:
                doubts.append(
                    f"{name} at {figures.label} varies by {spread:.0%} (stdev / mean): the "
                    "endpoint was busy, throttled or warming up"
                )
    return doubts
