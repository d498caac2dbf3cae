"""Measuring an endpoint's speed: warm-up calls, then each prompt length `repeats` times one call
at a time, a repeated prompt (does a cache answer it?), then the concurrency sweep. Every call is
streamed through benchyard's provider client, which times each chunk as it arrives (the first
reasoning token, the first answer token, the last token). Token counts are the endpoint's usage:
from the stream when it reports it there, else from the same request sent again unstreamed (its
"twin", at temperature 0), whose reply is compared with the streamed one."""

from __future__ import annotations

import asyncio
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
from benchyard.speed.prompts import prompt_key, prompt_text

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
        self.stream_client = ProviderClient(self.config)
        self.twin_client = ProviderClient(
            self.config.model_copy(update={"stream": False}), source="model"
        )

    async def aclose(self) -> None:
        await self.stream_client.aclose()
        await self.twin_client.aclose()

    async def run(self) -> None:
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
        started = time.perf_counter()
        sample, answer = await self._call(phase, label, text, 1, started)
        await self._add_twins([(sample, text, answer)])
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
        return sample, reply.reasoning + reply.content

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
