"""Webhooks as `benchyard.yaml` declares them:

```yaml
webhooks:
  release-channel:
    url: https://hooks.example.com/benchyard     # or url_env: a variable holding a secret URL
    secret_env: BENCHYARD_WEBHOOK_SECRET         # the HMAC-SHA256 signing key, by variable name
    events: [run.finished, run.regression, gate.decision]
    benchmarks: [starter]                        # default: every benchmark
    web_url: https://bench.example.com           # where the payload's links point
    max_tries: 6
    retry_base_sec: 2
```

The signing secret is never written in the file: only the name of the variable that holds it,
whose value is registered for scrubbing (src/benchyard/secrets.py). A URL carrying credentials
(`user:password@`) is refused; a URL that is itself a secret (a chat service's incoming-webhook
address) is given by variable too (`url_env`) and shown as `[redacted]`.
"""

from __future__ import annotations

import os
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchyard import secrets

EventName = Literal["run.finished", "run.regression", "gate.decision", "ping"]
EVENTS: tuple[EventName, ...] = ("run.finished", "run.regression", "gate.decision", "ping")
DEFAULT_EVENTS: tuple[EventName, ...] = ("run.finished", "run.regression", "gate.decision")
DEFAULT_WEB_URL = "http://127.0.0.1:8765"
MAX_TIMEOUT_SEC = 300.0  # the longest deadline a try may have


class WebhookConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str | None = Field(default=None, description="Where events are POSTed (http or https).")
    url_env: str | None = Field(
        default=None, description="A variable holding the URL, for URLs that are secrets."
    )
    secret_env: str = Field(
        min_length=1, description="The variable holding the HMAC-SHA256 signing secret."
    )
    events: list[EventName] = Field(default_factory=lambda: list(DEFAULT_EVENTS))
    benchmarks: list[str] | None = Field(
        default=None, description="Only events of runs of these benchmarks (default: all)."
    )
    web_url: str = Field(
        default=DEFAULT_WEB_URL, description="The web UI's address, for the payload's links."
    )
    max_tries: int = Field(default=6, ge=1, le=20)
    retry_base_sec: float = Field(default=2.0, gt=0, le=3600)
    timeout_sec: float = Field(
        default=10.0,
        gt=0,
        le=MAX_TIMEOUT_SEC,
        description="Each try's deadline, all of it: connecting, sending, the answer.",
    )

    @model_validator(mode="after")
    def _one_url(self) -> WebhookConfig:
        if (self.url is None) == (self.url_env is None):
            raise ValueError("give exactly one of url and url_env")
        if self.url is not None:
            check_url(self.url)
        check_url(self.web_url, what="web_url")
        return self

    def resolved_url(self) -> str:
        """The URL to POST to; WebhookUnusable when its variable is not set."""
        if self.url is not None:
            return self.url
        assert self.url_env is not None
        value = os.environ.get(self.url_env, "").strip()
        if not value:
            raise WebhookUnusable(f"the variable {self.url_env} (url_env) is not set")
        check_url(value, what=self.url_env)
        return value

    def shown_url(self) -> str:
        """The URL as it may be stored or printed: scrubbed of secrets, or `[redacted]` with its
        variable's name when the URL is itself a secret (url_env)."""
        if self.url is not None:
            return secrets.scrub(self.url)
        return f"{secrets.REDACTED} (${self.url_env})"

    def secret(self) -> bytes:
        value = os.environ.get(self.secret_env, "")
        if not value:
            raise WebhookUnusable(
                f"the variable {self.secret_env} (secret_env) is not set: nothing is sent unsigned"
            )
        return value.encode()

    def wants(self, event: str, benchmark: str | None) -> bool:
        if event == "ping":
            return True
        if event not in self.events:
            return False
        return self.benchmarks is None or benchmark in self.benchmarks


class WebhookUnusable(Exception):
    """A webhook that cannot be delivered as configured (a variable not set)."""


def check_url(url: str, what: str = "url") -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{what}: '{_shown(url)}' is not an http or https URL")
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            f"{what}: a URL must not carry credentials (user:password@); sign with secret_env, "
            "or give a secret URL by url_env"
        )
    return url


def _shown(url: str) -> str:
    return url if len(url) <= 80 else url[:77] + "..."


def register_webhook_secrets(webhooks: dict[str, WebhookConfig]) -> None:
    """Scrub the signing secrets and secret URLs from everything stored or printed."""
    from benchyard import secrets

    for webhook in webhooks.values():
        secrets.register_variables([webhook.secret_env])
        if webhook.url_env:
            secrets.register_variables([webhook.url_env])
