"""Configuration of OpenAI-compatible endpoints: providers, the models called through them, and
their prices. Declared in benchyard.yaml (`providers:`, `prices:`, `judge:`, agents of kind
`openai`), resolved into self-contained settings that a run records (never the API key itself)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchyard import secrets
from benchyard.errors import BenchyardError
from benchyard.providers.fake_script import load_script

DEFAULT_REASONING_FALLBACK: dict[str, Any] = {"reasoning_effort": "low"}
# Header names whose literal values are credentials: recorded redacted, scrubbed from output.
CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|cookie|passw", re.IGNORECASE)


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

    base_url: str = Field(
        default="", description="Up to the /v1, e.g. http://127.0.0.1:8080/v1 (or give `script`)."
    )
    script: str | None = Field(
        default=None,
        description="Instead of base_url: a fake-server script (YAML or JSON, as `benchyard "
        "fake-llm` takes) whose scripted replies the model bridge serves in its own process: "
        "no provider, no key, for tests and demos. Only the model bridge serves it.",
    )
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
    request_timeout_sec: float = Field(
        default=300.0,
        gt=0,
        description="The whole of one try of a call: connecting, sending and the complete reply "
        "(streamed or not). Past it the try is a provider fault, retried.",
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Extra request headers. Those whose name looks like a credential "
        "(authorization, *key*, *token*, *secret*, cookie) are recorded redacted; prefer "
        "headers_env for them.",
    )
    headers_env: dict[str, str] = Field(
        default_factory=dict,
        description="Extra request headers taken from environment variables: header name -> "
        "variable name. Read at request time, recorded by name only.",
    )

    @field_validator("base_url")
    @classmethod
    def _url_not_redacted(cls, base_url: str) -> str:
        if secrets.REDACTED in base_url:
            raise ValueError(
                "the URL was recorded redacted (it carries credentials), so it cannot be used "
                "again; give the key with api_key_env or headers_env instead of in the URL"
            )
        return base_url

    @field_validator("script")
    @classmethod
    def _script_reads(cls, script: str | None) -> str | None:
        if script is not None:
            try:
                load_script(Path(script))
            except BenchyardError as error:
                raise ValueError(str(error)) from None
        return script

    @model_validator(mode="after")
    def _an_endpoint_or_a_script(self) -> ProviderConfig:
        if bool(self.base_url) == (self.script is not None):
            raise ValueError("give a provider either base_url or script (scripted replies)")
        return self

    @field_validator("headers")
    @classmethod
    def _not_redacted(cls, headers: dict[str, str]) -> dict[str, str]:
        for name, value in headers.items():
            if value == secrets.REDACTED:
                raise ValueError(
                    f"header '{name}' was recorded redacted (it looks like a credential), so it "
                    "cannot be sent again; give it with headers_env "
                    f"({{{name}: VARIABLE}}) instead of its value"
                )
        return headers

    def secret_values(self) -> list[str | None]:
        """The values this provider's requests carry that must never be stored or printed: the
        API key, headers taken from variables, literal credential headers, credentials written
        into the URL."""
        names = [self.api_key_env, *self.headers_env.values()]
        literal = [v for name, v in self.headers.items() if CREDENTIAL_HEADER.search(name)]
        in_url = secrets.url_credentials(self.base_url)
        return [*(os.environ.get(name) for name in names if name), *literal, *in_url]

    def shown_url(self) -> str:
        """The base URL as it may be stored or printed: credentials in it redacted."""
        return secrets.redact_url(self.base_url)

    def endpoint(self) -> tuple[str, str]:
        """The base URL without its query, ending in `/`, and the query apart, for an
        HTTP client that joins request paths to it: joined as text, `...?api-version=X` would
        become `...?api-version=X/chat/completions`."""
        parts = urlsplit(self.base_url)
        base = urlunsplit(parts._replace(query="", fragment="")).rstrip("/") + "/"
        return base, parts.query

    def url_for(self, path: str, *, at_root: bool = False) -> str:
        """The URL of `path` below the base URL, or `at_root` below the server's root (the base
        URL without its trailing `/v1`, where llama.cpp's `/props` lives), the base URL's query
        kept after it."""
        parts = urlsplit(self.base_url)
        base = parts.path.rstrip("/")
        if at_root and base.endswith("/v1"):
            base = base[: -len("/v1")]
        return urlunsplit(parts._replace(path=f"{base}/{path.lstrip('/')}", fragment=""))

    def environment_headers(self) -> dict[str, str]:
        """The headers_env headers, read now; a variable that is not set is ProviderConfigError."""
        headers = {}
        for header, variable in self.headers_env.items():
            value = os.environ.get(variable)
            if value is None:
                raise ProviderConfigError(
                    f"the environment variable {variable} (headers_env for {header}) is not set"
                )
            headers[header] = value
        return headers


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


def register_provider_secrets(provider: dict[str, Any] | ProviderConfig) -> None:
    """Register the secrets a provider (as declared, or validated) carries, for scrubbing."""
    if isinstance(provider, dict):
        try:
            provider = ProviderConfig.model_validate(provider)
        except ValueError:  # not valid: it will be refused with its problems where it is used
            return
    secrets.register(*provider.secret_values())


def redacted_provider(provider: dict[str, Any]) -> dict[str, Any]:
    """A provider's settings as a run records them: credential headers' values and credentials
    in the URL redacted."""
    base_url = provider.get("base_url")
    if isinstance(base_url, str) and secrets.redact_url(base_url) != base_url:
        provider = {**provider, "base_url": secrets.redact_url(base_url)}
    headers = provider.get("headers")
    if not isinstance(headers, dict):
        return provider
    shown = {
        name: secrets.REDACTED if CREDENTIAL_HEADER.search(str(name)) else value
        for name, value in headers.items()
    }
    return {**provider, "headers": shown}


def redacted_model_config(config: dict[str, Any]) -> dict[str, Any]:
    """A model's settings (an `openai` agent, the judge) as a run records them."""
    provider = config.get("provider")
    if not isinstance(provider, dict):
        return config
    return {**config, "provider": redacted_provider(provider)}


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
