"""What the automation tests share: a benchmark on disk, a schedule added with a clock the test
controls, a local HTTP receiver of webhooks that records what it got, and benchyard.yaml files."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchyard.automation.schedules import Schedule, add_schedule
from benchyard.runner.execute import RunSettings
from benchyard.store.store import Store
from tests.support import scenario, write_benchmark

SECRET = "whsec-test-0123456789abcdef"


def small_benchmark(root: Path, name: str = "auto-bench") -> Path:
    return write_benchmark(
        root,
        [scenario(f"s{i}", "right", category="easy" if i < 2 else "hard") for i in range(4)],
        name=name,
    )


def oracle_schedule(
    store: Store, bench: Path, cron: str, now: datetime, missed: str = "once", grace: float = 600
) -> Schedule:
    settings = RunSettings(sandbox="none", allow_unsandboxed=True, work_root=None).to_json()
    return add_schedule(
        store,
        str(bench),
        "oracle",
        {"kind": "oracle"},
        settings,
        cron,
        missed=missed,
        grace_sec=grace,
        now=now,
    )


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """A real HTTP server on loopback; answers each request with the next status of `statuses`
    (then 200)."""

    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    url: str = ""

    def answer(self) -> int:
        return self.statuses.pop(0) if self.statuses else 200


@contextmanager
def receiver(statuses: list[int] | None = None) -> Iterator[Receiver]:
    state = Receiver(list(statuses or []))
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            with lock:
                state.received.append(
                    Received(
                        "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                    )
                )
                status = state.answer()
            reply = json.dumps({"ok": status < 300, "seen": len(state.received)}).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/benchyard"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def write_config(directory: Path, url: str, **webhook: Any) -> Path:
    """benchyard.yaml with one webhook `ci` signed by BENCHYARD_TEST_WEBHOOK_SECRET."""
    hook = {
        "url": url,
        "secret_env": "BENCHYARD_TEST_WEBHOOK_SECRET",
        "retry_base_sec": 0.2,
        "web_url": "http://bench.example:8765",
        **webhook,
    }
    lines = ["webhooks:", "  ci:"]
    lines += [f"    {key}: {json.dumps(value)}" for key, value in hook.items()]
    path = directory / "benchyard.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
