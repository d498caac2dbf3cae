"""Configuration of OpenAI-compatible endpoints: providers, the models called through them, and
their prices. Declared in benchyard.yaml (`providers:`, `prices:`, `judge:`, agents of kind
`openai`), resolved into self-contained settings that a run records (never the API key itself)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchyard.errors import BenchyardError

DEFAULT_REASONING_FALLBACK: dict[str, Any] = {"reasoning_effort": "low"}


class ProviderConfigError(BenchyardError):
    """A provider, a model or the judge in benchyard.yaml is not usable as declared."""


class ConfigModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelPrice(ConfigModel):
    """USD per million tokens."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)

    def cost_usd(self, tokens_in: int | None, tokens_out: int | None) -> float | None:
        if tokens_in is None and tokens_out is None:
            return None
        return (
            (tokens_in or 0) * self.input_per_mtok + (tokens_out or 0) * self.output_per_mtok
        ) / 1e6


class ProviderConfig(ConfigModel):
    """An OpenAI-compatible endpoint (llama.cpp's server, vLLM, Ollama, LM Studio, OpenRouter...)."""

    base_url: str = Field(description="Up to the /v1, e.g. http://127.0.0.1:8080/v1.")
    api_key_env: str | None = Field(
        default=None, description="The environment variable holding the API key (sent as Bearer)."
    )
    max_concurrent: int = Field(default=8, ge=1, description="Requests in flight at once.")
    max_retries: int = Field(
        default=5, ge=0, description="Retries of 429, 5xx, connection errors, truncated streams."
    )
    retry_backoff_sec: float = Field(default=1.0, ge=0, description="First retry delay.")
    max_retry_after_sec: float = Field(
        default=60.0, ge=0, description="The longest Retry-After that is honoured as given."
    )
    request_timeout_sec: float = Field(default=300.0, gt=0)
    headers: dict[str, str] = Field(default_factory=dict, description="Extra request headers.")


class ModelConfig(ConfigModel):
    """One model called through a provider, with its request settings."""

    provider: ProviderConfig
    model: str = Field(min_length=1)
    stream: bool = Field(default=True, description="Stream replies (measures time to first token).")
    temperature: float | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Extra request fields, e.g. top_p or a seed."
    )
    reasoning_fallback: dict[str, Any] | None = Field(
        default_factory=lambda: dict(DEFAULT_REASONING_FALLBACK),
        description="Request fields for the one retry after an answer lost to reasoning; "
        "null where the endpoint cannot lower reasoning.",
    )
    price: ModelPrice | None = None


def resolve_model_config(
    raw: dict[str, Any],
    providers: dict[str, dict[str, Any]],
    prices: dict[str, dict[str, Any]],
    drop: tuple[str, ...] = (),
) -> dict[str, Any]:
    """`raw` with `provider: NAME` replaced by that provider's settings and the model's price
    filled in from the price table, so that the result stands on its own in a run's record."""
    resolved = {key: value for key, value in raw.items() if key not in drop}
    provider = resolved.get("provider")
    if isinstance(provider, str):
        if provider not in providers:
            declared = ", ".join(sorted(providers)) or "none"
            raise ProviderConfigError(
                f"no provider named '{provider}' (declared under providers: {declared})"
            )
        resolved["provider"] = providers[provider]
    model = resolved.get("model")
    if "price" not in resolved and isinstance(model, str) and model in prices:
        resolved["price"] = prices[model]
    return resolved
