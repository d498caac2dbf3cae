"""The proposals page and the automation page: a proposal's diff (escaped), accepted or rejected
with the CSRF token as `benchyard proposals` would, nothing to decide under `--read-only`; the
schedules and webhook deliveries with every try."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchyard.automation import events
from benchyard.automation.proposals import get_proposal, propose_update
from benchyard.automation.webhook_config import WebhookConfig
from benchyard.automation.webhooks import deliver_due, emit
from benchyard.config import ProjectConfig
from benchyard.store.store import Store
from benchyard.web.app import create_app
from benchyard.web.config import WebConfig
from benchyard.web.tokens import new_token, token_hash
from tests.integration.automation.helpers import oracle_schedule, receiver
from tests.integration.web.support import (
    SCRIPT,
    Filled,
    ServerThread,
    browser_client,
    csrf_of,
    served,
)

HOSTILE = {
    "id": "s2",
    "category": "math",
    "stimulus": f"What is 3 + 4? {SCRIPT}",
    "reference": "7",
    "checks": [{"type": "equals", "value": "7"}],
}


def _propose(store: Store, filled: Filled) -> str:
    return propose_update(
        store,
        filled.benchmark_root,
        scenarios=[HOSTILE],
        title=f"harder {SCRIPT}",
        rationale=f"because {SCRIPT}",
        created_by="an assistant over MCP (stdio)",
    ).id


def test_a_pending_proposal_shows_its_diff_as_text_and_is_accepted_with_the_form(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    proposal_id = _propose(store, filled)
    client = browser_client(server)
    listing = client.get("/proposals")
    assert listing.status_code == 200 and proposal_id[:8] in listing.text
    page = client.get(f"/proposals/{proposal_id}")
    assert page.status_code == 200
    assert SCRIPT not in page.text and "&lt;script&gt;window.__xss" in page.text
    assert 'class="d-add"' in page.text and "What is 3 + 4?" in page.text
    assert 'action="/proposals/accept"' in page.text and 'action="/proposals/reject"' in page.text
    scenarios = filled.benchmark_root / "scenarios" / "main.yaml"
    before = scenarios.read_text(encoding="utf-8")
    forged = client.post("/proposals/accept", data={"proposal": proposal_id})
    assert forged.status_code == 403
    assert scenarios.read_text(encoding="utf-8") == before
    answer = client.post(
        "/proposals/accept",
        data={"proposal": proposal_id, "by": "Eve", "note": "ok", "csrf_token": csrf_of(client)},
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == f"/proposals/{proposal_id}?done=accepted"
    decided = get_proposal(store, proposal_id)
    assert (decided.status, decided.decided_by, decided.decision_note) == (
        "accepted",
        "Eve (web UI)",
        "ok",
    )
    assert "What is 3 + 4?" in scenarios.read_text(encoding="utf-8")
    shown = client.get(answer.headers["location"])
    assert "accepted: the files are written" in shown.text
    assert 'action="/proposals/accept"' not in shown.text  # decided: no form any more


def test_a_rejection_answers_json_and_a_second_decision_is_refused(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    proposal_id = _propose(store, filled)
    client = browser_client(server)
    token = {"X-CSRF-Token": csrf_of(client)}
    answer = client.post(
        "/api/proposals/reject", data={"proposal": proposal_id, "note": "no"}, headers=token
    )
    assert answer.status_code == 200 and answer.json()["ok"] is True
    again = client.post("/api/proposals/accept", data={"proposal": proposal_id}, headers=token)
    assert again.status_code == 400 and "was rejected" in again.json()["message"]
    api = client.get(f"/api/proposals/{proposal_id}").json()
    assert api["proposal"]["status"] == "rejected"
    # the scenario file, and benchmark.yaml with its version bumped
    assert [f["path"] for f in api["files"]] == ["benchmark.yaml", "scenarios/main.yaml"]


def test_a_read_only_server_shows_proposals_and_decides_nothing(
    store: Store, filled: Filled, tmp_path: Path
) -> None:
    proposal_id = _propose(store, filled)
    with served(store, tmp_path / "project", read_only=True) as running:
        client = browser_client(running)
        page = client.get(f"/proposals/{proposal_id}")
        assert page.status_code == 200 and "d-add" in page.text
        assert "/proposals/accept" not in page.text
        refused = client.post(
            "/proposals/accept", data={"proposal": proposal_id, "csrf_token": csrf_of(client)}
        )
        assert refused.status_code in (404, 405)
    assert get_proposal(store, proposal_id).status == "pending"


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> str:
    value = "whsec-page-test-0123456789"
    monkeypatch.setenv("BENCHYARD_PAGE_SECRET", value)
    return value


def test_the_automation_page_shows_schedules_and_every_delivery_try(
    store: Store, filled: Filled, tmp_path: Path, secret: str
) -> None:
    oracle_schedule(store, filled.benchmark_root, "0 3 * * 1", datetime(2026, 3, 2, tzinfo=UTC))
    with receiver([503]) as got:
        hooks = {"ci": WebhookConfig(url=got.url, secret_env="BENCHYARD_PAGE_SECRET", max_tries=1)}
        emit(store, hooks, events.PING, events.ping_payload("ci"))
        deliver_due(store, hooks)
    token = new_token()
    config = WebConfig(
        store_url=store.url,
        project=ProjectConfig(webhooks=hooks),
        benchmark_dirs=(tmp_path,),
        token_sha256=token_hash(token),
    )
    app = create_app(config, store=store, workdir=tmp_path)
    with ServerThread(app, token=token) as running:
        client = browser_client(running)
        page = client.get("/automation")
        assert page.status_code == 200
        assert "0 3 * * 1" in page.text and "HTTP 503" in page.text and "failed" in page.text
        assert secret not in page.text
        api = client.get("/api/automation").json()
    (delivery,) = api["deliveries"]
    assert (delivery["state"], delivery["try_log"][0]["status_code"]) == ("failed", 503)
    assert api["webhooks"][0]["url"] == got.url
    assert api["schedules"][0]["cron"] == "0 3 * * 1"
