"""What a worker does besides attempts (a listener of runner/run_events.py, registered by
`listen_to_workers`): fire due schedules, handle the
runs it ended (compare, announce), and send webhook deliveries. It runs in threads of its own, so
that the worker's event loop never waits on the store or on a receiver: one fires schedules and
handles ended runs, another sends deliveries, so that a slow receiver (each try ends by its
deadline, automation/webhooks.py) delays neither a scheduled run nor the announcement of another.

A queue worker (`benchyard worker`) starts the threads: every `tick_sec` one sends the deliveries
due, every `schedule_sec` the other fires the schedules due. An inline `benchyard run` does not: the run
it ended is handled when it stops. Stopping handles the runs still waiting, then sends what is due
and keeps retrying for at most `drain_sec`; a delivery still waiting after that stays in the store
for the next worker (or `benchyard webhooks deliver`)."""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy.exc import SQLAlchemyError

from benchyard.errors import BenchyardError
from benchyard.runner.run_events import register_listener
from benchyard.store.store import Store

if TYPE_CHECKING:  # imported with the benchyard.yaml that configures webhooks (config.py)
    from benchyard.automation.webhook_config import WebhookConfig

Log = Callable[[str], None]
Clock = Callable[[], datetime]
DRAIN_SEC = 15.0


def utc_now() -> datetime:
    return datetime.now(UTC)


def listen_to_workers() -> None:
    """Every worker started in this process from now on fires schedules, handles the runs it ends
    and sends webhook deliveries (the commands that start workers call it)."""
    register_listener(_for_worker)


def _for_worker(store: Store, log: Log, poll_sec: float) -> WorkerHooks:
    return WorkerHooks(store, log, poll_sec=poll_sec)


class WorkerHooks:
    def __init__(
        self,
        store: Store,
        log: Log | None = None,
        *,
        poll_sec: float = 1.0,
        clock: Clock = utc_now,
        webhooks: dict[str, WebhookConfig] | None = None,
        drain_sec: float = DRAIN_SEC,
    ) -> None:
        self.store = store
        self.log = log or (lambda message: None)
        self.clock = clock
        self.tick_sec = min(1.0, max(0.05, poll_sec))
        self.schedule_sec = min(5.0, max(0.1, 5 * poll_sec))
        self.drain_sec = drain_sec
        self._webhooks = webhooks
        self._ended: deque[str] = deque()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._sender: threading.Thread | None = None
        self._send_wake = threading.Event()
        self._loading = threading.Lock()
        self._schedules = False

    @property
    def webhooks(self) -> dict[str, WebhookConfig]:
        """The webhooks of the benchyard.yaml found from the working directory (as the CLI finds
        it); their secrets registered for scrubbing. Loaded once, by whichever thread asks first."""
        with self._loading:
            return self._load_webhooks()

    def _load_webhooks(self) -> dict[str, WebhookConfig]:
        if self._webhooks is None:
            from benchyard.config import find_config, load_config
            from benchyard.runner.api import register_secrets

            try:
                config = load_config(find_config())
            except BenchyardError as error:
                self.log(f"webhooks off: benchyard.yaml does not load: {error}")
                self._webhooks = {}
                return self._webhooks
            register_secrets(config)  # what the payloads must not carry
            self._webhooks = dict(config.webhooks)
            if self._webhooks:
                from benchyard.automation.webhook_config import register_webhook_secrets

                register_webhook_secrets(self._webhooks)
        return self._webhooks

    def start(self, *, schedules: bool) -> None:
        """Start the threads (a queue worker: `schedules` True fires the schedules)."""
        self._schedules = schedules
        self._thread = threading.Thread(target=self._loop, name="benchyard-hooks", daemon=True)
        self._sender = threading.Thread(
            target=self._send_loop, name="benchyard-webhooks", daemon=True
        )
        self._thread.start()
        self._sender.start()

    def run_ended(self, run_id: str) -> None:
        """A run this worker ended; handled by the thread, or when stopping."""
        self._ended.append(run_id)
        self._wake.set()

    def stop(self) -> None:
        """Stop the threads, handle the ended runs left, deliver what is due (with retries, for at
        most `drain_sec`). A try still under way then is left to its thread (a daemon): its
        delivery is claimed, and tried again by the next worker once its claim has run out."""
        self._stop.set()
        self._wake.set()
        self._send_wake.set()
        deadline = time.monotonic() + self.drain_sec
        if self._thread is not None:
            self._thread.join(timeout=60)
        self._handle_ended()
        if self._sender is not None:
            self._sender.join(timeout=max(0.0, deadline - time.monotonic()))
            if self._sender.is_alive():
                return
        if not self.webhooks:
            return
        while True:
            self._deliver()
            left = deadline - time.monotonic()
            if left <= 0 or not self._waiting(left):
                return
            time.sleep(min(self.tick_sec, left))

    # ---- the thread ------------------------------------------------------------------------

    def _loop(self) -> None:
        next_schedules = 0.0
        while not self._stop.is_set():
            self._handle_ended()
            if self._schedules and time.monotonic() >= next_schedules:
                next_schedules = time.monotonic() + self.schedule_sec
                self._safely(self._fire)
            self._wake.wait(self.tick_sec)
            self._wake.clear()

    def _send_loop(self) -> None:
        while not self._stop.is_set():
            if self.webhooks:
                self._deliver()
            self._send_wake.wait(self.tick_sec)
            self._send_wake.clear()

    def _fire(self) -> None:
        from benchyard.automation.schedules import fire_due

        fire_due(self.store, self.clock(), self.log)

    def _handle_ended(self) -> None:
        from benchyard.automation.after_run import handle_run_end

        while self._ended:
            run_id = self._ended.popleft()
            self._safely(
                functools.partial(
                    handle_run_end,
                    self.store,
                    self.webhooks,
                    run_id,
                    log=self.log,
                    now=self.clock(),
                )
            )
            self._send_wake.set()  # its announcements are due now

    def _deliver(self) -> None:
        from benchyard.automation.webhooks import deliver_due

        def send() -> None:
            for delivery in deliver_due(self.store, self.webhooks, self.clock):
                self.log(
                    f"webhook {delivery.webhook}: {delivery.event} {delivery.id[:8]} "
                    f"{delivery.state} (try {delivery.tries}, status {delivery.last_status})"
                )

        self._safely(send)

    def _waiting(self, within_sec: float) -> bool:
        from benchyard.automation.webhooks import due_count

        try:
            return due_count(self.store, self.clock(), within_sec) > 0
        except SQLAlchemyError:
            return False

    def _safely(self, action: Callable[[], object]) -> None:
        """A fault here never stops the worker: it is logged, and tried again next tick."""
        try:
            action()
        except (SQLAlchemyError, BenchyardError, OSError) as error:
            reason = getattr(error, "orig", None) or error
            self.log(f"automation: {type(error).__name__}: {str(reason).splitlines()[0][:300]}")
        except Exception as error:  # a bug here must not take the worker's attempts with it
            self.log(f"automation: unexpected {type(error).__name__}: {error}"[:400])
