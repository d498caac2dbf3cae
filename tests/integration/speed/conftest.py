"""Fixtures for the speed tests: fake OpenAI-compatible servers over real loopback HTTP, and a speed
run measured against one, with few calls (the figures' accuracy is bench/speed_accuracy.py's)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from benchyard.config import ProjectConfig
from benchyard.providers.fake_server import FakeLLM
from benchyard.speed.api import measure_speed, resolve_speed_agent
from benchyard.speed.models import SpeedOptions, SpeedReport
from benchyard.speed.report import build_speed_report
from benchyard.store.records import RunRecord
from benchyard.store.store import Store

StartFake = Callable[[dict[str, Any]], FakeLLM]
WORDS = (  # a reply on topic: 24 words that go on with the prompt's travel journal
    "We walked along the river toward the harbour while the morning light fell across "
    "the old stone bridge and the baker opened his door"
)
assert len(WORDS.split()) == 24
FEW = {
    "lengths": {"short": 20, "long": 120},
    "repeats": 3,
    "warmup": 1,
    "concurrency": [1, 3],
    "rounds": 1,
    "max_tokens": 64,
}


@pytest.fixture
def fake_llm() -> Iterator[StartFake]:
    with ExitStack() as stack:
        yield lambda script: stack.enter_context(FakeLLM(script))


def project(url: str, **agent: Any) -> ProjectConfig:
    return ProjectConfig(
        providers={"fake": {"base_url": url, "max_retries": 1, "retry_backoff_sec": 0.01}},
        agents={"model": {"kind": "openai", "provider": "fake", "model": "fake", **agent}},
    )


Measure = Callable[..., tuple[RunRecord, SpeedReport]]


@pytest.fixture
def measure(store: Store, tmp_path: Path) -> Measure:
    """Measure the fake at `url` with few calls; the run and its report."""

    def run(url: str, **options: Any) -> tuple[RunRecord, SpeedReport]:
        agent = resolve_speed_agent(project(url), "model")
        chosen = SpeedOptions.model_validate({**FEW, **options})
        recorded = measure_speed(store, agent, chosen, agent_repo=tmp_path)
        return recorded, build_speed_report(store, recorded)

    return run
