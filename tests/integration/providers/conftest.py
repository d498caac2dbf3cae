"""Fixtures for the provider tests: the fake OpenAI-compatible server over real loopback HTTP, and a
benchyard.yaml declaring an `openai` agent (and a judge) that points at it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchyard.providers.fake_server import FakeLLM

FAST_RETRIES = {"max_retries": 3, "retry_backoff_sec": 0.01}

StartFake = Callable[[dict[str, Any]], FakeLLM]


@pytest.fixture
def fake_llm() -> Iterator[StartFake]:
    """Start a fake server with a script; every server started is stopped after the test."""
    with ExitStack() as stack:
        yield lambda script: stack.enter_context(FakeLLM(script))


def write_project(
    directory: Path,
    url: str,
    *,
    agent: dict[str, Any] | None = None,
    judge: dict[str, Any] | None = None,
    judge_url: str | None = None,
) -> Path:
    """benchyard.yaml with provider `fake` at `url`, an agent `model` of kind openai, prices, and
    optionally a judge (on provider `judge` at `judge_url`)."""
    providers: dict[str, Any] = {"fake": {"base_url": url, **FAST_RETRIES}}
    config: dict[str, Any] = {
        "providers": providers,
        "prices": {
            "agent-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0},
            "judge-model": {"input_per_mtok": 10.0, "output_per_mtok": 20.0},
        },
        "agents": {
            "model": {"kind": "openai", "provider": "fake", "model": "agent-model", **(agent or {})}
        },
    }
    if judge is not None or judge_url is not None:
        providers["judge"] = {"base_url": judge_url or url, **FAST_RETRIES}
        config["judge"] = {"provider": "judge", "model": "judge-model", **(judge or {})}
    path = directory / "benchyard.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path
