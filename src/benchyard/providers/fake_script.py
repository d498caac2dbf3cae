"""What the fake OpenAI-compatible server answers: scripted replies keyed on the prompt.

Each request is answered by the first reply whose `match` (a case-insensitive substring) or
`regex` is found in the last message of the conversation, and whose `model` (if given) is the
requested one; a reply with `times: N` answers only its first N matching requests, after which
the next reply matching applies. Nothing matching: the `default` reply.

```yaml
replies:
  - match: weather in Paris
    tool_calls: [{name: get_weather, arguments: {city: Paris}}]
  - match: '"temp_c": 18'
    content: It is 18 °C in Paris.
  - match: flaky
    status: 429
    retry_after_sec: 0.2
    times: 2
default:
  content: I don't know.
```
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from benchyard.errors import BenchyardError, field_problems


class FakeScriptError(BenchyardError):
    """A fake-server script that cannot be read."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FakeToolCall(_Model):
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class FakeReply(_Model):
    match: str | None = Field(default=None, description="Substring of the last message (any case).")
    regex: str | None = Field(default=None, description="A regular expression searched in it.")
    model: str | None = Field(default=None, description="Only for requests naming this model.")
    times: int | None = Field(default=None, ge=1, description="Answer only the first N matches.")
    content: str = ""
    reasoning: str = ""
    tool_calls: list[FakeToolCall] = Field(default_factory=list)
    finish_reason: str | None = Field(
        default=None, description="Default: tool_calls when there are some, else stop."
    )
    prompt_tokens: int | None = Field(default=None, ge=0, description="Default: estimated.")
    completion_tokens: int | None = Field(default=None, ge=0, description="Default: estimated.")
    reasoning_tokens: int | None = Field(default=None, ge=0)
    usage: bool = Field(default=True, description="Report token usage.")
    stream_usage: bool = Field(
        default=True,
        description="Report usage in streamed replies too (llama-cpp-python's server does not).",
    )
    delay_sec: float = Field(default=0.0, ge=0, description="Wait before the reply starts.")
    chunk_delay_sec: float = Field(
        default=0.0,
        ge=0,
        description="Between streamed chunks, on a fixed schedule (no drift): the first token "
        "comes this long after the response starts, each next one this long after the last.",
    )
    prefill_sec_per_token: float = Field(
        default=0.0,
        ge=0,
        description="Wait this long per prompt token (as reported in usage) before the reply "
        "starts, after delay_sec: a prompt's prefill.",
    )
    cached_delay_sec: float | None = Field(
        default=None,
        ge=0,
        description="A request whose messages this reply answered before waits this long "
        "instead of delay_sec and the prefill: a warm prompt cache.",
    )
    status: int | None = Field(
        default=None, ge=400, le=599, description="Answer with this HTTP error instead."
    )
    retry_after_sec: float | None = Field(default=None, ge=0, description="Sent with `status`.")
    fault: Literal["reset", "truncate", "trickle"] | None = Field(
        default=None,
        description="reset: drop the connection; truncate: cut the reply off half-way; trickle: "
        "send the response head (streamed: and the content, without its end), then one byte "
        "every chunk_delay_sec (1 s when 0), never finishing (a stalled server that keeps its "
        "connection alive).",
    )
    echo_headers: bool = Field(
        default=False,
        description="Follow the content with the request's headers as JSON, as a server that "
        "echoes its input in its errors does (API keys included).",
    )

    @field_validator("regex")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"not a valid regular expression: {error}") from None
        return pattern

    def matches(self, last_message: str, model: str) -> bool:
        if self.model is not None and self.model != model:
            return False
        if self.match is not None and self.match.casefold() not in last_message.casefold():
            return False
        return self.regex is None or re.search(self.regex, last_message) is not None

    @property
    def finish(self) -> str:
        return self.finish_reason or ("tool_calls" if self.tool_calls else "stop")


class FakeScript(_Model):
    replies: list[FakeReply] = Field(default_factory=list)
    default: FakeReply = FakeReply(content="OK")
    models: list[dict[str, Any]] = Field(
        default_factory=lambda: [{"id": "fake", "object": "model"}],
        description="What GET /v1/models lists (llama.cpp's server adds `meta.size`, in bytes).",
    )
    props: dict[str, Any] | None = Field(
        default=None, description="What GET /props answers (llama.cpp's server); 404 when null."
    )
    probe_delay_sec: float = Field(
        default=0.0,
        ge=0,
        description="Wait this long before answering GET /v1/models and /props: a distant server.",
    )
    tokenizer: bool = Field(
        default=False,
        description="Serve POST /tokenize as llama.cpp's server does ({content} -> {tokens}), "
        "one token per word, as the fake's usage counts them.",
    )
    max_batch: int | None = Field(
        default=None,
        ge=1,
        description="Serve at most this many chat requests at once; the others wait their turn, "
        "their scripted schedule starting when it comes (a server whose batch is full: the "
        "aggregate throughput stops rising past this many requests in flight).",
    )


class ScriptPlayer:
    """Chooses the reply to each request, counting uses of the replies limited by `times`."""

    def __init__(self, script: FakeScript) -> None:
        self.script = script
        self.uses = [0] * len(script.replies)
        self._lock = threading.Lock()

    def choose(self, body: dict[str, Any]) -> FakeReply:
        last = last_message_text(body.get("messages"))
        model = str(body.get("model", ""))
        with self._lock:
            for index, reply in enumerate(self.script.replies):
                if reply.matches(last, model) and (
                    reply.times is None or self.uses[index] < reply.times
                ):
                    self.uses[index] += 1
                    return reply
        return self.script.default


def last_message_text(messages: Any) -> str:
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return ""
    content = messages[-1].get("content")
    if isinstance(content, list):  # content parts
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def load_script(source: FakeScript | dict[str, Any] | Path | None) -> FakeScript:
    """A script from a model, a mapping, or a YAML/JSON file."""
    if isinstance(source, FakeScript):
        return source
    if source is None:
        return FakeScript()
    data: Any = source
    if isinstance(source, Path):
        import yaml

        try:
            data = yaml.safe_load(source.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as error:
            raise FakeScriptError(f"{source}: cannot read the script: {error}") from None
    try:
        return FakeScript.model_validate(data or {})
    except ValidationError as error:
        where = f"{source}: " if isinstance(source, Path) else ""
        raise FakeScriptError(f"{where}{field_problems(error)}") from None
