"""What hears of a worker's runs besides the worker. A listener registered here is made for each
worker, started with a queue worker, told of each run the worker ends, and stopped with it
(automation/hooks.py: schedules fired, ended runs compared and announced, webhooks sent). The
worker announces; it imports nothing of who listens. The commands that start workers register
the listeners (automation's `listen_to_workers`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from benchyard.store.store import Store


class RunListener(Protocol):
    def start(self, *, schedules: bool) -> None:
        """A queue worker starts (`schedules`: it also fires the schedules due)."""

    def run_ended(self, run_id: str) -> None:
        """The worker ended this run (its last attempt written)."""

    def stop(self) -> None:
        """The worker stops: finish what is left, within a bound of the listener's own."""


ListenerFactory = Callable[["Store", Callable[[str], None], float], RunListener]
"""Makes a worker's listener from its store, its log and its poll interval (seconds)."""

_FACTORIES: list[ListenerFactory] = []


def register_listener(factory: ListenerFactory) -> None:
    """Every worker made from now on in this process gets a listener made by `factory` (once,
    however often it is registered)."""
    if factory not in _FACTORIES:
        _FACTORIES.append(factory)


class Listeners:
    """A worker's listeners, told each event in the order they were registered."""

    def __init__(self, store: Store, log: Callable[[str], None], poll_sec: float) -> None:
        self.listeners = [factory(store, log, poll_sec) for factory in _FACTORIES]

    def start(self, *, schedules: bool) -> None:
        for listener in self.listeners:
            listener.start(schedules=schedules)

    def run_ended(self, run_id: str) -> None:
        for listener in self.listeners:
            listener.run_ended(run_id)

    def stop(self) -> None:
        for listener in self.listeners:
            listener.stop()
