"""A worker's listeners: made from the factories registered (each once), told each event in order."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from benchyard.runner import run_events
from benchyard.runner.run_events import Listeners, register_listener


class Recorder:
    def __init__(self, name: str, heard: list[str]) -> None:
        self.name, self.heard = name, heard

    def start(self, *, schedules: bool) -> None:
        self.heard.append(f"{self.name} start schedules={schedules}")

    def run_ended(self, run_id: str) -> None:
        self.heard.append(f"{self.name} ended {run_id}")

    def stop(self) -> None:
        self.heard.append(f"{self.name} stop")


@pytest.fixture(autouse=True)
def no_listeners(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(run_events, "_FACTORIES", [])
    yield


def test_each_registered_listener_hears_each_event_in_order() -> None:
    heard: list[str] = []
    made: list[tuple[Any, float]] = []

    def factory(name: str) -> Callable[[Any, Callable[[str], None], float], Recorder]:
        def make(store: Any, log: Callable[[str], None], poll_sec: float) -> Recorder:
            made.append((store, poll_sec))
            return Recorder(name, heard)

        return make

    first, second = factory("a"), factory("b")
    register_listener(first)
    register_listener(second)
    register_listener(first)  # once, however often
    listeners = Listeners("store", print, 0.5)
    listeners.start(schedules=True)
    listeners.run_ended("r1")
    listeners.stop()
    assert made == [("store", 0.5), ("store", 0.5)]
    assert heard == [
        "a start schedules=True",
        "b start schedules=True",
        "a ended r1",
        "b ended r1",
        "a stop",
        "b stop",
    ]


def test_a_worker_with_no_listener_registered_announces_to_none() -> None:
    listeners = Listeners("store", print, 1.0)
    listeners.start(schedules=False)
    listeners.run_ended("r1")
    listeners.stop()
    assert listeners.listeners == []
