"""The judge: a model configured apart from the agent (`judge:` in benchyard.yaml) that grades
answers for the judge checks. Its calls go into the attempt's trajectory marked as the judge's, so
they are shown with the attempt but costed apart from the agent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import Field, ValidationError

from benchyard import secrets
from benchyard.errors import field_problems
from benchyard.providers.client import ProviderClient
from benchyard.providers.config import ModelConfig, ProviderConfigError, resolve_model_config
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.trajectory import JUDGE_SOURCE, Event

T = TypeVar("T")
SHOWN_REPLY_CHARS = 200


class JudgeConfig(ModelConfig):
    stream: bool = False
    temperature: float | None = 0.0
    parse_retries: int = Field(
        default=2, ge=0, description="Asks again after a reply that cannot be read."
    )


class Judge:
    """Shared by the attempts of a run (one request limit); close it with `aclose()`."""

    def __init__(self, config: JudgeConfig) -> None:
        self.config = config
        self.client = ProviderClient(config, source=JUDGE_SOURCE)

    async def verdict(
        self,
        messages: list[dict[str, Any]],
        parse: Callable[[str], T],
        sink: list[Event],
        label: str,
    ) -> T:
        """Ask the judge and read its reply with `parse` (which raises ValueError for a reply it
        cannot read); an unreadable reply is asked again, then is a `judge_unparseable` failure,
        retried with the attempt and then held against the answer (runner/failures.py)."""
        problem = ""
        for _ in range(self.config.parse_retries + 1):
            reply = await self.client.chat(messages, sink)
            event = reply.to_event(role=JUDGE_SOURCE, source=JUDGE_SOURCE)
            assert event.data is not None
            event.data["check"] = label
            sink.append(event)
            try:
                return parse(reply.content)
            except ValueError as error:
                shown = secrets.scrub(reply.content)[:SHOWN_REPLY_CHARS]
                problem = secrets.scrub(f"unparseable judge reply for {label}: {error}: {shown!r}")
                sink.append(
                    Event(
                        kind="error",
                        role=JUDGE_SOURCE,
                        content=problem,
                        data={"source": JUDGE_SOURCE},
                    )
                )
        raise AttemptFailure(
            FailureKind.JUDGE_UNPARSEABLE,
            f"{problem} (asked {self.config.parse_retries + 1} times)",
        )

    async def aclose(self) -> None:
        await self.client.aclose()


def judge_settings(
    raw: dict[str, Any] | None,
    providers: dict[str, dict[str, Any]],
    prices: dict[str, dict[str, Any]],
) -> dict[str, Any] | None:
    """The judge declared in benchyard.yaml, resolved and validated, as a run records it."""
    if raw is None:
        return None
    try:
        config = JudgeConfig.model_validate(resolve_model_config(raw, providers, prices))
    except ValidationError as error:
        raise ProviderConfigError(f"judge in benchyard.yaml: {field_problems(error)}") from None
    return config.model_dump(mode="json")


def build_judge(settings: dict[str, Any] | None) -> Judge | None:
    """The judge a run recorded in its settings, or None when it has none."""
    return Judge(JudgeConfig.model_validate(settings)) if settings else None
