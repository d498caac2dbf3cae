"""The speed benchmark's data: its options (recorded with the run), one measured call (a sample),
and the report built from a run's samples (figures, plausibility findings, confidence)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SPEED_PROTOCOL = "1"
"""The version of how `benchyard speed` measures; recorded as the run's benchmark version."""

DEFAULT_LENGTHS = {"short": 50, "medium": 200, "long": 800}

Phase = Literal["warmup", "length", "probe", "concurrency"]
UsageSource = Literal["stream", "twin", "twin_differs", "none"]
ConfidenceLevel = Literal["HIGH", "MEDIUM", "LOW"]
Rule = Literal[
    "decode_over_bandwidth",
    "warm_cache",
    "ttft_below_rtt",
    "buffered_stream",
    "usage_outside_bounds",
    "off_topic",
    "client_stall",
]


class SpeedModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SpeedOptions(SpeedModel):
    """What `benchyard speed` measures and how; recorded in the run's settings."""

    lengths: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_LENGTHS),
        description="Prompt lengths in words, by label, measured in this order.",
    )
    repeats: int = Field(default=5, ge=1, description="Measured calls per prompt length.")
    warmup: int = Field(default=2, ge=0, description="Calls before measuring, not counted.")
    concurrency: list[int] = Field(
        default_factory=lambda: [1, 4, 16], description="Requests in flight at once, each level."
    )
    rounds: int = Field(default=2, ge=1, description="Batches of requests at each level.")
    level_length: str | None = Field(
        default=None, description="The prompt length the sweep uses (default: the middle one)."
    )
    max_tokens: int = Field(default=128, ge=2, description="Tokens asked for in each reply.")
    same_prompt: bool = Field(
        default=False,
        description="Repeat one prompt per length instead of a new one per call (what a prompt "
        "cache serves warm; the figures then say so).",
    )
    model_size_gb: float | None = Field(
        default=None, gt=0, description="Bytes read per generated token, in GB: the weights."
    )
    bandwidth_gbs: float | None = Field(
        default=None, gt=0, description="Memory bandwidth of the hardware serving the model."
    )
    hardware: str | None = Field(default=None, description="A hardware profile (bandwidth).")

    @field_validator("lengths")
    @classmethod
    def _lengths(cls, lengths: dict[str, int]) -> dict[str, int]:
        if not lengths:
            raise ValueError("give at least one prompt length")
        for label, words in lengths.items():
            if (
                not label
                or len(label) > 40
                or not label.replace("-", "").replace("_", "").isalnum()
            ):
                raise ValueError(f"'{label}' is not a label (letters, digits, '-', '_')")
            if words < 10:
                raise ValueError(f"{label}={words}: a prompt needs at least 10 words")
        return lengths

    @field_validator("concurrency")
    @classmethod
    def _levels(cls, levels: list[int]) -> list[int]:
        if any(level < 1 for level in levels):
            raise ValueError("concurrency levels are at least 1")
        return sorted(set(levels))

    @model_validator(mode="after")
    def _level_length(self) -> SpeedOptions:
        if self.level_length is None:
            labels = list(self.lengths)
            self.level_length = labels[len(labels) // 2]
        elif self.level_length not in self.lengths:
            raise ValueError(
                f"level_length '{self.level_length}' is not one of the lengths "
                f"({', '.join(self.lengths)})"
            )
        return self


class Sample(SpeedModel):
    """One measured call, as stored (times in seconds from the request sent)."""

    position: int
    phase: Phase
    label: str
    prompt_words: int
    prompt_key: str = Field(description="Equal keys: the same prompt text.")
    concurrency: int = 1
    started_sec: float = Field(
        description="When the request was written out, from the start of its batch (a level)."
    )
    sent_sec: float | None = Field(
        default=None,
        description="The client's time to write the request out (a new connection, its own "
        "work on other requests): the other times count from the request written.",
    )
    total_sec: float | None = None
    ttft_sec: float | None = None
    reasoning_ttft_sec: float | None = None
    content_ttft_sec: float | None = None
    last_token_sec: float | None = None
    token_chunks: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    reasoning_tokens: int | None = None
    usage_source: UsageSource = "none"
    retries: int = 0
    error: str | None = None
    reply_chars: int | None = Field(
        default=None, description="Characters of the reply (reasoning and answer), counted here."
    )
    reply_words: int | None = Field(default=None, description="Its whitespace-separated words.")
    expected_words: int | None = Field(
        default=None,
        description="How many of its words are ones an answer to the prompt uses (the prompt's "
        "vocabulary and English's common words): a reply on topic has many.",
    )
    tokenizer_tokens: int | None = Field(
        default=None,
        description="The reply's tokens by the serving model's own tokenizer (the server's "
        "POST /tokenize), where it has one.",
    )
    client_lag_sec: float | None = Field(
        default=None,
        description="The longest this client's event loop was late during the call (a ticker "
        "task's lag): a stall on this side delays the chunks' timestamps.",
    )
    retakes: int = Field(
        default=0, description="Takes of this call thrown away because the client stalled."
    )

    @property
    def decode_tps(self) -> float | None:
        """Tokens per second after the first: (tokens out - 1) / (last token - first token)."""
        if self.tokens_out is None or self.tokens_out < 2:
            return None
        if self.ttft_sec is None or self.last_token_sec is None:
            return None
        span = self.last_token_sec - self.ttft_sec
        return (self.tokens_out - 1) / span if span > 0 else None

    @property
    def prefill_tps(self) -> float | None:
        """Prompt tokens over the time to the first token (network and queueing included)."""
        if self.tokens_in is None or not self.ttft_sec:
            return None
        return self.tokens_in / self.ttft_sec


class Environment(SpeedModel):
    """What was learnt about the endpoint before measuring; recorded with the run."""

    base_url: str
    model: str
    rtt_sec: float | None = Field(description="Fastest GET /v1/models: the network round trip.")
    model_size_bytes: int | None = None
    model_size_source: str | None = None
    bandwidth_bytes_per_sec: float | None = None
    bandwidth_source: str | None = None


class MetricStats(SpeedModel):
    n: int
    mean: float
    median: float
    p95: float
    stdev: float | None = Field(description="Sample standard deviation; None for one value.")
    min: float
    max: float


class LengthFigures(SpeedModel):
    label: str
    prompt_words: int
    calls: int
    errors: int
    tokens_in: float | None = Field(description="Median prompt tokens (the endpoint's usage).")
    tokens_out: float | None = Field(description="Median reply tokens (the endpoint's usage).")
    ttft_sec: MetricStats | None = Field(description="To the first token of any kind.")
    reasoning_ttft_sec: MetricStats | None = Field(description="To the first reasoning token.")
    content_ttft_sec: MetricStats | None = Field(description="To the first answer token.")
    decode_tps: MetricStats | None = Field(description="Tokens per second after the first.")
    prefill_tps: MetricStats | None = Field(description="Prompt tokens / time to first token.")
    total_sec: MetricStats | None


class PrefillFit(SpeedModel):
    """Time to first token against prompt tokens, a line through the lengths' medians: its slope
    is the prefill's time per token, its intercept the fixed latency (network, queueing, the
    first decoding step)."""

    prefill_tps: float
    fixed_latency_sec: float
    points: int


class LevelFigures(SpeedModel):
    concurrency: int
    calls: int
    errors: int
    wall_sec: float = Field(description="First request sent to last reply complete, all rounds.")
    tokens_out: int
    aggregate_tps: float | None = Field(description="Reply tokens of all calls / wall time.")
    ttft_sec: MetricStats | None
    decode_tps: MetricStats | None = Field(description="Each call's own decode speed.")


class Saturation(SpeedModel):
    """Where the concurrency sweep's aggregate throughput stops rising."""

    concurrency: int | None = Field(
        description="The level past which throughput rose by less than 10% (None: still rising "
        "at the highest level)."
    )
    aggregate_tps: float | None
    next_concurrency: int | None = Field(description="The level above it, that gained little.")
    next_aggregate_tps: float | None


class Finding(SpeedModel):
    """A figure that cannot be true (`implausible`), or a fact about the endpoint that affects
    such figures elsewhere (`note`), and why."""

    rule: Rule
    severity: Literal["implausible", "note"]
    figure: str
    message: str


class Confidence(SpeedModel):
    level: ConfidenceLevel
    reasons: list[str]


class SpeedRunInfo(SpeedModel):
    id: str
    status: str
    agent: str
    model: str
    base_url: str
    commit: str | None
    dirty: bool | None
    host: str
    benchyard_version: str
    started_at: datetime
    finished_at: datetime | None
    protocol: str = Field(description="The speed protocol's version and hash of its options.")
    options: SpeedOptions


class SpeedReport(SpeedModel):
    schema_version: str = "1"
    kind: Literal["speed"] = "speed"
    run: SpeedRunInfo
    environment: Environment
    lengths: list[LengthFigures]
    prefill_fit: PrefillFit | None
    concurrency: list[LevelFigures]
    saturation: Saturation | None = None
    findings: list[Finding]
    confidence: Confidence
    samples: int
    usage_sources: dict[str, int] = Field(
        description="Measured calls by where their token counts came from: stream (the stream's "
        "usage), twin (the same request unstreamed, same reply), twin_differs, none."
    )
    retries: int
    errors: list[str] = Field(description="The first errors of failed calls, at most 10.")


class RatioInterval(SpeedModel):
    baseline: float | None
    candidate: float | None
    ratio: float | None = Field(description="candidate / baseline, of the medians.")
    ratio_ci95: tuple[float, float] | None = Field(
        description="Bootstrap interval of the ratio of medians (2,000 resamples, seeded)."
    )


class SpeedDelta(SpeedModel):
    figure: str
    better: Literal["higher", "lower"]
    values: RatioInterval


class SpeedCandidate(SpeedModel):
    run: SpeedRunInfo
    confidence: Confidence
    deltas: list[SpeedDelta]


class SpeedComparison(SpeedModel):
    schema_version: str = "1"
    kind: Literal["speed"] = "speed"
    baseline: SpeedRunInfo
    baseline_confidence: Confidence
    candidates: list[SpeedCandidate]


def options_of(settings: dict[str, Any]) -> SpeedOptions:
    return SpeedOptions.model_validate(settings.get("speed") or {})
