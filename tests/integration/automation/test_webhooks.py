"""Webhooks against a real local HTTP receiver: signed bodies, a retry after a 500, every try and
its response recorded; events sent by a real worker and by an inline run, a regression included."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from benchyard import secrets
from benchyard.automation import events
from benchyard.automation.signing import SIGNATURE_HEADER, verify
from benchyard.automation.webhook_config import WebhookConfig
from benchyard.automation.webhooks import deliver_due, emit, list_deliveries, tries_of
from benchyard.config import load_config
from benchyard.spec.problems import BenchmarkInvalid
from benchyard.store.store import Store
from tests.integration.automation.helpers import SECRET, receiver, small_benchmark, write_config
from tests.integration.queue.helpers import WorkerProcess, wait_for
from tests.support import UNSANDBOXED, Cli

SECRET_ENV = "BENCHYARD_TEST_WEBHOOK_SECRET"


@pytest.fixture(autouse=True)
def signing_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)


def _hook(url: str, **extra: object) -> WebhookConfig:
    return WebhookConfig.model_validate(
        {"url": url, "secret_env": SECRET_ENV, "retry_base_sec": 2.0, **extra}
    )


def test_a_delivery_is_signed_retried_after_a_500_and_every_try_recorded(store: Store) -> None:
    t0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
    clock = {"now": t0}
    with receiver([500]) as got:
        hooks = {"ci": _hook(got.url)}
        (made,) = emit(store, hooks, events.PING, events.ping_payload("ci"), now=t0)
        (first,) = deliver_due(store, hooks, lambda: clock["now"])
        assert (first.state, first.tries, first.last_status) == ("pending", 1, 500)
        assert first.next_try_at == t0 + timedelta(seconds=2)
        clock["now"] = t0 + timedelta(seconds=1)
        assert deliver_due(store, hooks, lambda: clock["now"]) == []  # not due yet
        clock["now"] = t0 + timedelta(seconds=2)
        (second,) = deliver_due(store, hooks, lambda: clock["now"])
        assert (second.state, second.tries, second.last_status) == ("delivered", 2, 200)
    assert [r.body for r in got.received] == [made.payload.encode()] * 2
    for request in got.received:
        assert verify(SECRET.encode(), request.body, request.headers[SIGNATURE_HEADER.lower()])
        assert request.headers["x-benchyard-event"] == "ping"
        assert request.headers["x-benchyard-delivery"] == made.id
    tries = tries_of(store, [made.id])[made.id]
    assert [(t.try_number, t.status_code) for t in tries] == [(1, 500), (2, 200)]
    assert json.loads(str(tries[1].response)) == {"ok": True, "seen": 2}
    assert list_deliveries(store)[0].state == "delivered"


def test_tries_stop_after_max_tries_and_a_refused_connection_is_recorded(store: Store) -> None:
    with receiver() as got:
        url = got.url
    hooks = {"ci": _hook(url, max_tries=2, retry_base_sec=0.01)}  # nobody listens there now
    emit(store, hooks, events.PING, events.ping_payload("ci"))
    wait_for(
        lambda: bool(deliver_due(store, hooks)) and list_deliveries(store)[0].state != "pending",
        10,
        "both tries",
    )
    (delivery,) = list_deliveries(store)
    assert (delivery.state, delivery.tries) == ("failed", 2)
    tries = tries_of(store, [delivery.id])[delivery.id]
    assert all(t.status_code is None and "Connect" in str(t.error) for t in tries)


def test_nothing_is_sent_unsigned(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A secret not set is a configuration error: failed at once, never tried again (its four
    tries used to end as `pending (status None)`, each the same refusal)."""
    monkeypatch.delenv(SECRET_ENV)
    with receiver() as got:
        hooks = {"ci": _hook(got.url, max_tries=4)}
        emit(store, hooks, events.PING, events.ping_payload("ci"))
        (delivery,) = deliver_due(store, hooks)
    assert got.received == []
    assert delivery.state == "failed"  # at its first try, though 4 were allowed
    (attempt,) = tries_of(store, [delivery.id])[delivery.id]
    assert f"{SECRET_ENV} (secret_env) is not set" in str(attempt.error)


def test_webhooks_test_says_the_secret_is_not_set(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SECRET_ENV)
    with receiver() as got:
        write_config(cli.cwd, got.url)
        result = cli("webhooks", "test", "ci")
    assert result.exit_code == 1
    assert "failed (status None)" in result.output  # not pending: nothing will try it again
    assert f"{SECRET_ENV} (secret_env) is not set" in result.output


def test_a_url_with_credentials_or_without_a_scheme_is_refused(tmp_path: Path) -> None:
    write_config(tmp_path, "https://user:pw@hooks.example/x")
    with pytest.raises(BenchmarkInvalid, match="must not carry credentials"):
        load_config(tmp_path / "benchyard.yaml")
    write_config(tmp_path, "hooks.example/x")
    with pytest.raises(BenchmarkInvalid, match="not an http or https URL"):
        load_config(tmp_path / "benchyard.yaml")


def test_a_real_worker_announces_the_run_it_finished(
    store: Store, db_url: str, tmp_path: Path, cli: Cli
) -> None:
    bench = small_benchmark(tmp_path / "b")
    with receiver([500]) as got:
        write_config(cli.cwd, got.url, events=["run.finished"])
        queued = cli("run", str(bench), "--agent", "oracle", *UNSANDBOXED, "--enqueue")
        assert queued.exit_code == 0, queued.output
        run_id = queued.output.strip().splitlines()[-1]
        log = tmp_path / "worker.log"
        worker = WorkerProcess(db_url, cli.cwd, log, "--poll", "0.05")
        try:
            wait_for(lambda: len(got.received) >= 2, 60, "the delivery and its retry")
            wait_for(lambda: list_deliveries(store)[0].state == "delivered", 30, "delivered")
        finally:
            assert worker.stop() == 0
    first, second = got.received
    assert first.body == second.body
    assert verify(SECRET.encode(), second.body, second.headers[SIGNATURE_HEADER.lower()])
    payload = second.json()
    assert payload["event"] == "run.finished" and payload["webhook"] == "ci"
    assert payload["run"]["id"] == run_id and payload["run"]["status"] == "finished"
    assert payload["summary"]["passed"] == 4 and payload["summary"]["accuracy"] == 1.0
    assert payload["links"]["run"] == f"http://bench.example:8765/runs/{run_id}"
    assert payload["comparison"] is None
    shown = cli("webhooks", "deliveries")
    assert shown.exit_code == 0, shown.output
    assert "delivered after 2 tries" in shown.output
    assert "try 1" in shown.output and "HTTP 500" in shown.output and "HTTP 200" in shown.output


def test_an_inline_run_that_regresses_sends_a_regression_event(
    store: Store, tmp_path: Path, cli: Cli
) -> None:
    bench = small_benchmark(tmp_path / "b", name="regress-bench")
    more = [
        f"- id: x{i}\n  stimulus: say right\n  checks: [{{type: equals, value: right}}]\n"
        for i in range(6)
    ]
    with (bench / "scenarios" / "main.yaml").open("a", encoding="utf-8") as out:
        out.write("".join(more))
    with receiver() as got:
        write_config(cli.cwd, got.url, events=["run.regression"])
        agent = ("--agent-name", "mine", *UNSANDBOXED, "-q")
        good = cli("run", str(bench), "--agent-cmd", "echo right", *agent)
        assert good.exit_code == 0, good.output
        assert got.received == []  # nothing to compare with, and no run.finished asked for
        bad = cli("run", str(bench), "--agent-cmd", "echo wrong", *agent)
        assert bad.exit_code == 0, bad.output
    (request,) = got.received
    payload = request.json()
    baseline, latest = store.resolve_run("latest~1"), store.resolve_run("latest")
    assert payload["event"] == "run.regression" and payload["run"]["id"] == latest.id
    comparison = payload["comparison"]
    assert comparison["baseline_run"] == baseline.id and comparison["regression"] is True
    assert comparison["pass_to_fail"] == 10
    assert "significant regression" in comparison["headline"]
    assert payload["links"]["compare"].endswith(f"/compare?run={baseline.id}&run={latest.id}")
    assert SECRET not in request.body.decode()
    assert secrets.REDACTED not in request.body.decode()  # nothing needed scrubbing here


def test_a_gate_decision_is_announced_with_its_reasons(store: Store) -> None:
    from benchyard.automation.announce import announce_gate
    from tests.support import run_record

    run = run_record("e1e2e3e4e5e6e7e8", benchmark_name="starter", agent_commit="abc123")
    store.create_run(run)
    decision = {
        "decision": "canary",
        "exit_code": 10,
        "run_id": run.id,
        "summary": "canary: full needs accuracy's lower bound at 0.90, found 0.81",
        "reasons": [{"level": "full", "rule": "min_accuracy_lower_bound", "met": False}],
        "policy": "policy.yaml",
        "policy_sha256": "ab" * 32,
        "figures": {"accuracy_lower_bound": 0.81},
    }
    with receiver([502]) as got:
        hooks = {
            "ci": _hook(got.url, events=["gate.decision"], retry_base_sec=0.05),
            "other": _hook(got.url, events=["gate.decision"], benchmarks=["not-starter"]),
        }
        (made,) = announce_gate(store, hooks, run, decision, drain_sec=5)
    assert [r.json()["event"] for r in got.received] == ["gate.decision"] * 2  # 502, then 200
    payload = got.received[-1].json()
    assert (payload["decision"], payload["exit_code"]) == ("canary", 10)
    assert payload["reasons"] == decision["reasons"]
    assert payload["policy"] == {"path": "policy.yaml", "sha256": "ab" * 32}
    assert payload["run"]["agent"]["commit"] == "abc123"
    assert list_deliveries(store)[0].state == "delivered" and made.webhook == "ci"


def test_webhooks_test_sends_a_ping_and_says_what_came_back(tmp_path: Path, cli: Cli) -> None:
    with receiver([404]) as got:
        write_config(cli.cwd, got.url, max_tries=1)
        failed = cli("webhooks", "test", "ci")
        assert failed.exit_code == 1 and "failed (status 404)" in failed.output
        passed = cli("webhooks", "test", "ci")
        assert passed.exit_code == 0 and "delivered (status 200)" in passed.output
    listed = cli("webhooks", "list", db=False)
    assert (
        "ci: http://127.0.0.1" in listed.output and "BENCHYARD_TEST_WEBHOOK_SECRET" in listed.output
    )
    assert SECRET not in listed.output
    assert json.loads(got.received[0].body)["event"] == "ping"
