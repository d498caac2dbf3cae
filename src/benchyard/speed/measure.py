"""Measuring an endpoint's speed: warm-up calls, then each prompt length `repeats` times one call
at a time, a repeated prompt (does a cache answer it?), then the concurrency sweep. Every call is
streamed through benchyard's provider client, which times each chunk as it arrives (the first
reasoning token, the first answer token, the last token). Token counts are the endpoint's usage:
from the stream when it reports it there, else from the same request sent again unstreamed (its
"twin", at temperature 0), whose reply is compared with the streamed one. The reply's own
characters, words and words on topic are counted here (plausibility.py bounds the usage with
them); a ticker task measures this client's event-loop lag during each call, and a call one at a
time during which the client stalled is taken again."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from benchyard.errors import BenchyardError
from benchyard.providers.client import ProviderClient
from benchyard.providers.config import ModelConfig
from benchyard.providers.replies import ChatReply
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import Event
from benchyard.speed.models import Phase, Sample, SpeedOptions, UsageSource
from benchyard.speed.plausibility import stalled
from benchyard.speed.prompts import expected_words, prompt_key, prompt_text
from benchyard.speed.tokenizer import EndpointTokenizer

TICK_SEC = 0.005  # the ticker's period: the loop's lag is measured this often
MAX_RETAKES = 2  # a stalled call is taken again at most this many times (then kept, flagged)

SampleSink = Callable[[list[Sample]], None]
"""Receives the samples of each finished step (a call, or a batch of a level), to store them."""


class SpeedRefused(BenchyardError):
    """The endpoint refused the measuring requests (a wrong key, an unknown model, ...)."""


def planned_calls(options: SpeedOptions) -> int:
    probe = 0 if options.same_prompt else 1
    level_rounds = options.rounds + (1 if options.warmup else 0)
    return (
        options.warmup
        + len(options.lengths) * options.repeats
        + probe
        + sum(options.concurrency) * level_rounds
    )


def measuring_config(config: ModelConfig, options: SpeedOptions) -> ModelConfig:
    """The agent's model settings as the speed benchmark calls them: streamed, `max_tokens` from
    the options, temperature 0 unless the agent sets one, and as many requests in flight as the
    sweep's highest level."""
    provider = config.provider.model_copy(
        update={"max_concurrent": max([config.provider.max_concurrent, *options.concurrency])}
    )
    return config.model_copy(
        update={
            "provider": provider,
            "stream": True,
            "max_tokens": options.max_tokens,
            "temperature": 0.0 if config.temperature is None else config.temperature,
        }
    )


class Ticker:
    """A task that wakes every TICK_SEC and notes how late it woke (the event loop's lag): while
    the loop is blocked (this process's own work, a slow callback, the machine starving it) the
    chunks it reads are timestamped late, whatever the server did."""

    def __init__(self) -> None:
        self._lags: list[tuple[float, float]] = []  # (woke at, lag): only lags over a tick
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._tick())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _tick(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(TICK_SEC)
            woke = time.perf_counter()
            lag = woke - before - TICK_SEC
            if lag > TICK_SEC:
                self._lags.append((woke, lag))
                if len(self._lags) > 10_000:
                    del self._lags[:5_000]

    def lag_sec(self, start: float, end: float) -> float:
        """The longest lag that overlapped [start, end] (perf_counter seconds)."""
        return max(
            (lag for woke, lag in self._lags if woke >= start and woke - lag <= end), default=0.0
        )


@dataclass
class Measurer:
    config: ModelConfig
    options: SpeedOptions
    sink: SampleSink
    on_call: Callable[[], None] = lambda: None
    usage_in_stream: bool | None = None  # learnt from the first reply
    _positions: itertools.count[int] = field(default_factory=itertools.count)
    _prompts: dict[str, str] = field(default_factory=dict)  # same_prompt: one per length

    def __post_init__(self) -> None:
        self.ticker = Ticker()
        self.tokenizer = EndpointTokenizer(self.config)
        self.stream_client = ProviderClient(self.config)
        self.twin_client = ProviderClient(
            self.config.model_copy(update={"stream": False}), source="model"
        )

    async def aclose(self) -> None:
        await self.tokenizer.aclose()
        await self.stream_client.aclose()
        await self.twin_client.aclose()

    async def run(self) -> None:
        self.ticker.start()
        try:
            await self._run()
        finally:
            await self.ticker.stop()

    async def _run(self) -> None:
        options = self.options
        middle = options.level_length
        assert middle is not None
        for _ in range(options.warmup):
            await self._one("warmup", middle, self._prompt(middle, fresh=True))
        for label in options.lengths:
            for _ in range(options.repeats):
                await self._one("length", label, self._prompt(label))
        if not options.same_prompt:
            last = list(options.lengths)[-1]
            await self._one("probe", last, self._prompts[last])
        for level in options.concurrency:
            await self._level(level, middle)

    # ---- prompts ----------------------------------------------------------------------

    def _prompt(self, label: str, fresh: bool = False) -> str:
        words = self.options.lengths[label]
        if self.options.same_prompt and not fresh and label in self._prompts:
            return self._prompts[label]
        text = prompt_text(words, uuid.uuid4().hex[:12])
        if not fresh:
            self._prompts.setdefault(label, text)
        return text

    # ---- calls --------------------------------------------------------------------------

    async def _one(self, phase: Phase, label: str, text: str) -> None:
        """One call at a time; taken again (up to MAX_RETAKES times) while the client stalled
        during it, the stalled takes counted in the kept sample's `retakes`."""
        retakes = 0
        while True:
            started = time.perf_counter()
            sample, answer = await self._call(phase, label, text, 1, started)
            if sample.error is not None or not stalled(sample) or retakes >= MAX_RETAKES:
                break
            retakes += 1
            if phase != "probe" and not self.options.same_prompt:  # a new prompt: no cache
                fresh = self._prompt(label, fresh=True)
                if self._prompts.get(label) == text:
                    self._prompts[label] = fresh
                text = fresh
        sample.retakes = retakes
        await self._add_twins([(sample, text, answer)])
        await self._count_tokens([(sample, answer)])
        self.sink([sample])

    async def _level(self, level: int, label: str) -> None:
        """`rounds` batches of `level` calls at once, new prompts each, after a batch of warm-up
        (connections opened, the server's batch warm) when the run has warm-ups; times from the
        level's start, so that its wall time spans all its measured rounds."""
        warm = 1 if self.options.warmup else 0
        started = time.perf_counter()
        for round_number in range(warm + self.options.rounds):
            if round_number == warm:
                started = time.perf_counter()  # the measured rounds' clock
            phase: Phase = "warmup" if round_number < warm else "concurrency"
            texts = [self._prompt(label, fresh=True) for _ in range(level)]
            batch = await asyncio.gather(
                *(self._call(phase, f"c{level}", text, level, started) for text in texts)
            )
            await self._add_twins(
                [
                    (sample, text, answer)
                    for (sample, answer), text in zip(batch, texts, strict=True)
                ]
            )
            await self._count_tokens(list(batch))
            self.sink([sample for sample, _ in batch])

    async def _call(
        self, phase: Phase, label: str, text: str, level: int, batch_start: float
    ) -> tuple[Sample, str]:
        """One streamed call, timed; the sample and the reply's text (reasoning and answer)."""
        messages = [{"role": "user", "content": text}]
        events: list[Event] = []
        sent = time.perf_counter()
        sample = Sample(
            position=next(self._positions),
            phase=phase,
            label=label,
            prompt_words=len(text.split()),
            prompt_key=prompt_key(text),
            concurrency=level,
            started_sec=sent - batch_start,
        )
        try:
            reply = await self.stream_client.chat(messages, events)
        except AttemptFailure as failure:
            if failure.kind == FailureKind.PROVIDER_REJECTED:
                raise SpeedRefused(failure.message) from None
            sample.error = failure.message
            sample.retries = _retries(events)
            self.on_call()
            return sample, ""
        self.on_call()
        if self.usage_in_stream is None:
            self.usage_in_stream = reply.tokens_out is not None
        _fill(sample, reply, _retries(events))
        sample.started_sec += sample.sent_sec or 0.0
        sample.client_lag_sec = self.ticker.lag_sec(sent, time.perf_counter())
        text = reply.reasoning + reply.content
        sample.reply_chars, sample.reply_words = len(text), len(text.split())
        sample.expected_words = expected_words(text)
        return sample, text

    async def _add_twins(self, calls: list[tuple[Sample, str, str]]) -> None:
        """Token counts from the unstreamed twin of each call (sample, prompt, streamed reply),
        when the stream reported none; `twin_differs` when the twin's reply is not the same."""
        wanted = [c for c in calls if c[0].error is None and c[0].usage_source == "none"]
        if not wanted or self.usage_in_stream is not False:
            return
        replies = await asyncio.gather(
            *(self._twin(prompt) for _, prompt, _ in wanted), return_exceptions=True
        )
        for (sample, _, streamed), twin in zip(wanted, replies, strict=True):
            if isinstance(twin, BaseException):
                if not isinstance(twin, AttemptFailure):
                    raise twin
                continue
            sample.tokens_in, sample.tokens_out = twin.tokens_in, twin.tokens_out
            sample.reasoning_tokens = twin.reasoning_tokens
            same = _words(twin.reasoning + twin.content) == _words(streamed)
            source: UsageSource = "twin" if same else "twin_differs"
            sample.usage_source = source if twin.tokens_out is not None else "none"

    async def _count_tokens(self, calls: list[tuple[Sample, str]]) -> None:
        """Each reply's tokens by the server's own tokenizer, where it has one (after the calls:
        never while one is timed). Only for calls whose usage counts."""
        wanted = [(s, text) for s, text in calls if s.error is None and s.tokens_out is not None]
        if not wanted or self.tokenizer.available is False:
            return
        if self.tokenizer.available is None:  # the first: is there one at all?
            first, text = wanted.pop(0)
            first.tokenizer_tokens = await self.tokenizer.count(text)
        counts = await asyncio.gather(*(self.tokenizer.count(text) for _, text in wanted))
        for (sample, _), count in zip(wanted, counts, strict=True):
            sample.tokenizer_tokens = count

    async def _twin(self, text: str) -> ChatReply:
        return await self.twin_client.chat([{"role": "user", "content": text}], [])


def _fill(sample: Sample, reply: ChatReply, retries: int) -> None:
    """Times from the moment the request was written out (the client's own queueing and a new
    connection are the client's, not the endpoint's); how long that took is kept apart."""
    sent = reply.sent_sec or 0.0

    def after(moment: float | None) -> float | None:
        return None if moment is None else moment - sent

    sample.sent_sec = reply.sent_sec
    sample.total_sec = after(reply.latency_sec)
    sample.ttft_sec = after(reply.ttft_sec)
    sample.reasoning_ttft_sec = after(reply.reasoning_ttft_sec)
    sample.content_ttft_sec = after(reply.content_ttft_sec)
    sample.last_token_sec = after(reply.last_token_sec)
    sample.token_chunks = reply.token_chunks
    sample.tokens_in, sample.tokens_out = reply.tokens_in, reply.tokens_out
    sample.reasoning_tokens = reply.reasoning_tokens
    sample.usage_source = "stream" if reply.tokens_out is not None else "none"
    sample.retries = retries


def _retries(events: list[Event]) -> int:
    return sum(1 for event in events if event.kind == "log")


def _words(text: str) -> list[str]:
    return text.split()
