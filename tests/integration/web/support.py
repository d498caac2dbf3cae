"""What the web tests share: a store filled through the store API (runs, tries, trajectories,
checks, a judge's reply, a patch, agent output carrying XSS payloads, a queued run held by a
worker), a benchmark on disk whose YAML holds comments, and the server run under a real uvicorn on
loopback (in a thread) or as a real `benchyard serve` process. Every server needs its token, on
loopback too: the tests send it as a browser does, in the cookie `?token=` sets."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from benchyard.runner.trajectory import Event
from benchyard.store.queue import Queue, WorkerIdentity
from benchyard.store.records import AttemptRecord, CheckRecord
from benchyard.store.store import Store
from benchyard.web.access import TOKEN_COOKIE
from benchyard.web.app import create_app
from benchyard.web.config import WebConfig
from benchyard.web.tokens import new_token, token_hash
from tests.support import attempt_record, run_record

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
SCRIPT = "<script>window.__xss = 1; document.title = 'owned'</script>"
IMAGE = '<img src="/nothing" onerror="window.__xss = 2">'
PAYLOAD = f"the answer is {SCRIPT} and {IMAGE}"
BENCHMARK_YAML = """\
# Scenarios of the web tests. This comment must survive an edit.
- id: s1
  category: math
  stimulus: "What is 2 + 2?"
  reference: "4"
  checks:
    - type: equals
      value: "4"   # the right answer

- id: s2
  category: math
  stimulus: "What is 3 + 3?"
  reference: "6"
  checks:
    - type: equals
      value: "6"

# text scenarios below
- id: s3
  category: text
  stimulus: Say hello.
  reference: hello
  checks:
    - type: contains
      value: hello

- id: s4
  category: text
  stimulus: Say bye.
  reference: bye
  checks:
    - type: contains
      value: bye
"""
JUDGE_REPLY = json.dumps(
    {
        "criteria": [
            {"criterion": 1, "met": True, "reason": "it names the number"},
            {"criterion": 2, "met": False, "reason": f"it carries markup {SCRIPT}"},
        ],
        "explanation": "half of the criteria are met",
    }
)


def write_web_benchmark(root: Path, name: str = "webbench", version: str = "1.0") -> Path:
    (root / "scenarios").mkdir(parents=True, exist_ok=True)
    (root / "benchmark.yaml").write_text(f"name: {name}\nversion: '{version}'\n", encoding="utf-8")
    (root / "scenarios" / "main.yaml").write_text(BENCHMARK_YAML, encoding="utf-8")
    (root / "scenarios" / "fixtures").mkdir(exist_ok=True)
    (root / "scenarios" / "fixtures" / "notes.txt").write_text("fixture notes\n", encoding="utf-8")
    return root


@dataclass(frozen=True)
class Filled:
    """The ids of what `fill_store` wrote."""

    benchmark_root: Path
    baseline: str  # run A: s1, s2 passed, s3 failed, s4 passed on its second try
    candidate: str  # run B: s2 fails (payloads), s3 passes, s4 errors
    other_version: str  # run C: version 2.0, another agent, a filtered subset
    queued: str  # run D: queued, one attempt claimed by a worker
    payload_attempt: str  # the try of run B holding the XSS payloads (and the judge)
    superseded_try: str  # run A's first try of s4, superseded by a retry
    final_try: str  # run A's second try of s4
    worker: str


def fill_store(store: Store, benchmark_root: Path) -> Filled:
    write_web_benchmark(benchmark_root)
    path = str(benchmark_root.resolve())
    from benchyard.benchmarks.loader import load_benchmark

    content_hash = load_benchmark(benchmark_root).content_hash
    common: dict[str, Any] = {
        "benchmark_name": "webbench",
        "benchmark_version": "1.0",
        "benchmark_hash": content_hash,
        "benchmark_path": path,
        "agent_name": "alpha",
        "agent_config": {"kind": "oracle"},
        "planned_attempts": 4,
    }
    baseline, candidate = "a0a0a0a0a0a0a001", "b0b0b0b0b0b0b002"
    other, queued = "c0c0c0c0c0c0c003", "d0d0d0d0d0d0d004"
    store.create_run(
        run_record(
            baseline,
            started_at=T0,
            finished_at=T0 + timedelta(minutes=1),
            agent_commit="aaaa1111aaaa1111",
            **common,
        )
    )
    store.create_run(
        run_record(
            candidate,
            started_at=T0 + timedelta(hours=1),
            finished_at=T0 + timedelta(hours=1, minutes=1),
            agent_commit="bbbb2222bbbb2222",
            **common,
        )
    )
    store.create_run(
        run_record(
            other,
            started_at=T0 + timedelta(hours=2),
            finished_at=T0 + timedelta(hours=2, minutes=1),
            agent_commit="cccc3333cccc3333",
            settings={"epochs": 1, "filters": ["category:math"]},
            **{
                **common,
                "agent_name": "beta",
                "benchmark_version": "2.0",
                "benchmark_hash": "sha256:" + "2" * 64,
                "planned_attempts": 2,
            },
        )
    )
    superseded_try, final_try = "a" * 31 + "4", "a" * 31 + "5"
    payload_attempt = "b" * 31 + "2"
    store.record_attempts(
        [
            _attempt(baseline, "a" * 31 + "1", "s1", "math", "passed"),
            _attempt(baseline, "a" * 31 + "2", "s2", "math", "passed"),
            _attempt(baseline, "a" * 31 + "3", "s3", "text", "failed", cause="said goodbye"),
            _attempt(
                baseline,
                superseded_try,
                "s4",
                "text",
                "error",
                superseded=True,
                failure_kind="provider_unavailable",
                cause="the provider answered 503 three times",
            ),
            _attempt(baseline, final_try, "s4", "text", "passed", try_number=2),
            _attempt(candidate, "b" * 31 + "1", "s1", "math", "passed"),
            _payload_attempt(candidate, payload_attempt),
            _attempt(candidate, "b" * 31 + "3", "s3", "text", "passed"),
            _attempt(
                candidate,
                "b" * 31 + "4",
                "s4",
                "text",
                "error",
                failure_kind="sandbox_start",
                cause="the sandbox could not start",
            ),
            _attempt(other, "c" * 31 + "1", "s1", "math", "passed"),
            _attempt(other, "c" * 31 + "2", "s2", "math", "failed", cause="wrong"),
        ]
    )
    queue = Queue(store)
    queue.enqueue(
        run_record(queued, started_at=T0 + timedelta(hours=3), **common),
        [("s1", 1), ("s2", 1), ("s3", 1), ("s4", 1)],
    )
    worker = WorkerIdentity(id="web-test-worker:1", node="test-node", pid=1)
    queue.claim(worker, limit=1, lease_sec=3600, run_id=queued)
    return Filled(
        benchmark_root=benchmark_root,
        baseline=baseline,
        candidate=candidate,
        other_version=other,
        queued=queued,
        payload_attempt=payload_attempt,
        superseded_try=superseded_try,
        final_try=final_try,
        worker=worker.id,
    )


RERUN = "a0a0a0a0a0a0a0f1"


def rerun_of_the_baseline(store: Store, filled: Filled) -> str:
    """A rerun of the baseline's failed s3 (same agent, commit and benchmark), which now passes,
    started in the same minute as the baseline."""
    baseline = store.get_run(filled.baseline)
    store.create_run(
        run_record(
            RERUN,
            benchmark_name=baseline.benchmark_name,
            benchmark_version=baseline.benchmark_version,
            benchmark_hash=baseline.benchmark_hash,
            benchmark_path=baseline.benchmark_path,
            agent_name=baseline.agent_name,
            agent_config=baseline.agent_config,
            agent_commit=baseline.agent_commit,
            parent_run_id=baseline.id,
            started_at=T0 + timedelta(seconds=30),
            finished_at=T0 + timedelta(seconds=50),
            planned_attempts=1,
        )
    )
    store.record_attempts([attempt_record(RERUN, "r" * 32, "s3", category="text")])
    return RERUN


def _attempt(
    run_id: str, attempt_id: str, scenario_id: str, category: str, verdict: str, **extra: Any
) -> AttemptRecord:
    passed = verdict == "passed"
    checks = (
        []
        if verdict == "error"
        else [
            CheckRecord(
                0,
                "equals",
                "equals",
                passed,
                float(passed),
                1.0,
                "matches" if passed else "differs",
            )
        ]
    )
    return attempt_record(
        run_id,
        attempt_id,
        scenario_id,
        category=category,
        verdict=verdict,
        score=float(passed),
        answer="4" if passed else "5",
        checks=checks,
        trajectory=[Event(kind="message", role="user", content=f"question {scenario_id}", ts=1.0)],
        **extra,
    )


def _payload_attempt(run_id: str, attempt_id: str) -> AttemptRecord:
    events = [
        Event(kind="message", role="user", content="What is 3 + 3?", ts=1000.0),
        Event(
            kind="message",
            role="assistant",
            content=PAYLOAD,
            ts=1001.5,
            tokens_in=12,
            tokens_out=7,
            cost_usd=0.0021,
            ttft_sec=0.25,
            latency_sec=1.5,
            reasoning=f"thinking {IMAGE}",
            data={"source": "model", "model": "fake-model"},
        ),
        Event(
            kind="tool_call",
            role="assistant",
            content='calculator({"expression": "3+3"})',
            ts=1002.0,
            data={"tool": "calculator", "arguments": {"expression": "3+3"}, "call_id": "c1"},
        ),
        Event(
            kind="tool_result",
            role="tool",
            content="6",
            ts=1002.1,
            data={"tool": "calculator", "call_id": "c1", "error": False},
        ),
        Event(
            kind="message",
            role="judge",
            content=JUDGE_REPLY,
            ts=1003.0,
            tokens_in=40,
            tokens_out=20,
            cost_usd=0.0005,
            data={"source": "judge", "check": "rubric"},
        ),
    ]
    return attempt_record(
        run_id,
        attempt_id,
        "s2",
        category="math",
        verdict="failed",
        score=0.5,
        answer=PAYLOAD,
        stdout=f"stdout says {SCRIPT}",
        stderr=f"stderr says {IMAGE}",
        cause=f"equals: expected 6, got {SCRIPT}",
        turns=2,
        tokens_in=12,
        tokens_out=7,
        cost_usd=0.0021,
        judge_tokens_in=40,
        judge_tokens_out=20,
        judge_cost_usd=0.0005,
        trajectory=events,
        patch=(
            "diff --git a/answer.txt b/answer.txt\n--- a/answer.txt\n+++ b/answer.txt\n"
            f"@@ -1 +1 @@\n-5\n+{SCRIPT}\n"
        ),
        checks=[
            CheckRecord(0, "equals", "equals", False, 0.0, 1.0, f"expected 6, got {IMAGE}"),
            CheckRecord(1, "llm_rubric", "rubric", False, 0.5, 1.0, "1/2 criteria met", 1.0),
        ],
    )


# ---- servers ------------------------------------------------------------------------------------


class ServerThread:
    """The app under a real uvicorn, on a socket bound before it starts (no port race)."""

    def __init__(self, app: Any, host: str = "127.0.0.1", token: str = "") -> None:
        self.token = token
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(
            uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
        )
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def cookies(self) -> dict[str, str]:
        """What a browser holds once it opened the address with `?token=`."""
        return {TOKEN_COOKIE: self.token}

    def get(self, path: str, **options: Any) -> httpx.Response:
        """GET `path` as a browser that was let in (its token cookie, no CSRF cookie yet)."""
        with httpx.Client(base_url=self.url, cookies=self.cookies, timeout=30) as client:
            return client.get(path, **options)

    def post(self, path: str, **options: Any) -> httpx.Response:
        with httpx.Client(base_url=self.url, cookies=self.cookies, timeout=30) as client:
            return client.post(path, **options)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the web server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *_: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
        self.sock.close()


@contextmanager
def served(
    store: Store,
    workdir: Path,
    *,
    read_only: bool = False,
    host: str = "127.0.0.1",
    token: str | None = None,
    benchmark_dirs: tuple[Path, ...] = (),
    allow_unsandboxed: bool = False,
) -> Iterator[ServerThread]:
    """The app under uvicorn in a thread, with its token (`token`, else a new one)."""
    token = token or new_token()
    config = WebConfig(
        store_url=store.url,
        host=host,
        read_only=read_only,
        token_sha256=token_hash(token),
        benchmark_dirs=benchmark_dirs or (workdir,),
        allow_unsandboxed=allow_unsandboxed,
    )
    app = create_app(config, store=store, workdir=workdir)
    with ServerThread(app, host=host, token=token) as server:
        yield server


def registered_routes(app: Any) -> list[tuple[str, set[str]]]:
    """Every (path, methods) the app serves, through included routers however they are held."""
    found: list[tuple[str, set[str]]] = []

    def walk(routes: list[Any]) -> None:
        for route in routes:
            inner = getattr(route, "original_router", None)
            if inner is not None:
                walk(list(inner.routes))
                continue
            methods = getattr(route, "methods", None)
            if methods:
                found.append((route.path, set(methods)))

    walk(list(app.routes))
    return found


def browser_client(server: ServerThread) -> httpx.Client:
    """A client let in with the server's token that has been given its CSRF cookie, as a browser
    has after its first page."""
    client = httpx.Client(
        base_url=server.url, cookies=server.cookies, timeout=30, follow_redirects=False
    )
    client.get("/runs").raise_for_status()
    return client


def csrf_of(client: httpx.Client) -> str:
    return str(client.cookies.get("benchyard_csrf"))


SERVE_TOKEN = new_token()  # what serve_process gives `benchyard serve` on loopback


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve_process(
    db_url: str, cwd: Path, *args: str, port: int | None = None, token: str | None = SERVE_TOKEN
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`benchyard serve` as a real process; yields it and its base URL once it answers. It is
    given `token` (BENCHYARD_WEB_TOKEN) unless None or the arguments say otherwise: then it makes
    its own and prints it."""
    port = port or free_port()
    command = [
        sys.executable,
        "-m",
        "benchyard",
        "serve",
        "--db",
        db_url,
        "--port",
        str(port),
        *args,
    ]
    environment = {k: v for k, v in os.environ.items() if k != "BENCHYARD_WEB_TOKEN"}
    if token is not None and "--token" not in args and "--host" not in args:
        environment["BENCHYARD_WEB_TOKEN"] = token
    process = subprocess.Popen(
        command, cwd=cwd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"benchyard serve exited: {process.stderr.read() if process.stderr else ''}"
                )
            try:
                httpx.get(url + "/static/benchyard.css", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield process, url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
