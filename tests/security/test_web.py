"""Attacks on the web UI (docs/security.md, "The web UI"): agent output that carries markup, a
state change forged by another site, a request without the token on a non-loopback address, a
page reached through a rebound host name, and artifact URLs that try to leave the store."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from benchyard.store.schema import attempt_queue, runs
from benchyard.store.store import Store
from benchyard.web.tokens import token_hash
from tests.integration.web.support import (
    BENCHMARK_YAML,
    IMAGE,
    SCRIPT,
    Filled,
    ServerThread,
    browser_client,
    csrf_of,
    fill_store,
    registered_routes,
    served,
)

TEMPLATES = Path(__file__).resolve().parents[2] / "src" / "benchyard" / "web" / "templates"


@pytest.fixture
def filled(store: Store, tmp_path: Path) -> Filled:
    return fill_store(store, tmp_path / "project" / "webbench")


@pytest.fixture
def server(store: Store, filled: Filled, tmp_path: Path) -> Iterator[ServerThread]:
    with served(store, tmp_path / "project") as running:
        yield running


# ---- agent output is text -----------------------------------------------------------------------


def test_agent_output_is_escaped_on_every_page_that_shows_it(
    server: ServerThread, filled: Filled
) -> None:
    showing = [
        f"/runs/{filled.candidate}",
        f"/runs/{filled.candidate}?attempt={filled.payload_attempt}",
        f"/attempts/{filled.payload_attempt}",
        f"/attempts/{filled.payload_attempt}?fragment=1",
        f"/runs/{filled.candidate}?verdict=failed",
    ]
    for path in [*showing, f"/compare?run={filled.baseline}&run={filled.candidate}", "/queue"]:
        html = httpx.get(server.url + path, timeout=30).text
        assert SCRIPT not in html and IMAGE not in html, path
        assert "<script>window" not in html and "<img" not in html, path
        if path in showing:
            assert "&lt;script&gt;window.__xss" in html, path  # shown, as text
    drawer = httpx.get(server.url + f"/attempts/{filled.payload_attempt}", timeout=30).text
    assert drawer.count("&lt;script&gt;window.__xss") >= 5  # answer, stdout, cause, event, patch
    assert "&lt;img src=&#34;/nothing&#34; onerror=" in drawer  # stderr, check reason, reasoning


def test_every_response_carries_a_policy_that_runs_no_inline_script(
    server: ServerThread, filled: Filled
) -> None:
    for path in (
        "/runs",
        f"/runs/{filled.candidate}",
        "/api/runs",
        "/nowhere",
        "/static/benchyard.js",
    ):
        answer = httpx.get(server.url + path, timeout=30)
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy, path
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
    artifact = httpx.get(server.url + f"/attempts/{filled.payload_attempt}/answer", timeout=30)
    assert artifact.headers["content-type"].startswith("text/plain")
    assert artifact.text.startswith("the answer is <script>")  # served as text, not as a page


def test_no_template_marks_a_value_safe_or_holds_an_inline_script() -> None:
    for template in TEMPLATES.glob("*.html"):
        text = template.read_text(encoding="utf-8")
        assert "|safe" not in text.replace(" ", ""), template.name
        assert "autoescape false" not in text, template.name
        assert "<script>" not in text and "<script " not in text.replace(
            '<script src="/static/', ""
        ), template.name
        assert "style=" not in text and " on" + "click=" not in text, template.name


# ---- forged state changes -------------------------------------------------------------------------


def _state(store: Store, filled: Filled) -> tuple[int, list[str], str]:
    with store.engine.connect() as connection:
        count = int(connection.execute(select(func.count()).select_from(runs)).scalar_one())
        states = sorted(
            connection.execute(
                select(attempt_queue.c.state).where(attempt_queue.c.run_id == filled.queued)
            ).scalars()
        )
    scenarios = (filled.benchmark_root / "scenarios" / "main.yaml").read_text(encoding="utf-8")
    return count, states, scenarios


def _post_routes(server: ServerThread, filled: Filled) -> list[str]:
    paths = [p for p, methods in registered_routes(server.server.config.app) if "POST" in methods]
    documented = httpx.get(server.url + "/api/openapi.json", timeout=30).json()["paths"]
    assert {p for p in paths if p.startswith("/api/")} == {
        p for p, methods in documented.items() if "post" in methods
    }
    values = {
        "{run_ref}": filled.queued,
        "{name}": "webbench",
        "{scenario_id}": "s1",
    }
    concrete = []
    for path in paths:
        for placeholder, value in values.items():
            path = path.replace(placeholder, value)
        assert "{" not in path, path
        concrete.append(path)
    return concrete


def test_every_state_change_is_refused_without_the_csrf_token(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    routes = _post_routes(server, filled)
    assert len(routes) >= 10  # queue, cancel, rerun, rescore, edit; each also under /api
    client = browser_client(server.url)
    good = csrf_of(client)
    form = {"benchmark": "webbench", "agent": "oracle", "field:stimulus": "owned"}
    before = _state(store, filled)
    for path in routes:
        attempts = {
            "no token": client.post(path, data=form),
            "a wrong token": client.post(path, data={**form, "csrf_token": "x" * 32}),
            "a token but no cookie": httpx.post(
                server.url + path, data={**form, "csrf_token": good}, timeout=30
            ),
            "another site": client.post(
                path,
                data={**form, "csrf_token": good},
                headers={"origin": "http://attacker.example"},
            ),
        }
        for why, answer in attempts.items():
            assert answer.status_code == 403, (path, why, answer.status_code)
    assert _state(store, filled) == before
    allowed = client.post(f"/runs/{filled.queued}/cancel", data={"csrf_token": good})
    assert allowed.status_code == 303  # the same request with its token goes through
    assert store.get_run(filled.queued).status == "cancelled"


# ---- the token on other addresses ---------------------------------------------------------------------


def test_a_non_loopback_server_refuses_every_request_without_its_token(
    store: Store, filled: Filled, tmp_path: Path
) -> None:
    token = "a-token-of-the-test-" + hashlib.sha256(os.urandom(8)).hexdigest()
    with served(
        store, tmp_path / "project", host="0.0.0.0", token_sha256=token_hash(token)
    ) as server:
        for path in (
            "/runs",
            "/api/runs",
            f"/runs/{filled.candidate}",
            f"/runs/{filled.queued}/events",
            f"/attempts/{filled.payload_attempt}/stdout",
            "/benchmarks/webbench/files/scenarios/fixtures/notes.txt",
            "/api/openapi.json",
        ):
            assert httpx.get(server.url + path, timeout=30).status_code == 401, path
            wrong = httpx.get(server.url + path, params={"token": token[:-1]}, timeout=30)
            assert wrong.status_code == 401, path
        posted = httpx.post(server.url + f"/runs/{filled.queued}/cancel", timeout=30)
        assert posted.status_code == 401 and store.get_run(filled.queued).status == "running"
        forged_cookie = httpx.get(
            server.url + "/runs", cookies={"benchyard_token": "guess"}, timeout=30
        )
        assert forged_cookie.status_code == 401
        assert httpx.get(server.url + "/static/benchyard.css", timeout=30).status_code == 200
        entry = httpx.get(server.url + "/runs", params={"token": token}, timeout=30)
        assert entry.status_code == 303
        bearer = httpx.get(
            server.url + "/api/runs", headers={"authorization": f"Bearer {token}"}, timeout=30
        )
        assert bearer.status_code == 200


def test_loopback_answers_only_to_loopback_host_names(server: ServerThread) -> None:
    rebound = httpx.get(server.url + "/api/runs", headers={"host": "attacker.example"}, timeout=30)
    assert rebound.status_code == 421
    for host in ("127.0.0.1", "localhost", f"localhost:{server.port}"):
        assert (
            httpx.get(server.url + "/api/runs", headers={"host": host}, timeout=30).status_code
            == 200
        )


# ---- artifacts never leave the store ----------------------------------------------------------------


def test_file_and_artifact_urls_cannot_leave_the_benchmark_or_the_store(
    server: ServerThread, filled: Filled
) -> None:
    outside = filled.benchmark_root.parent / "secret.txt"
    outside.write_text("root:x:0:0 the secret\n", encoding="utf-8")
    (filled.benchmark_root / "scenarios" / "fixtures" / "link.txt").symlink_to(outside)
    (filled.benchmark_root / "scenarios" / "fixtures" / "dir-link").symlink_to(outside.parent)
    base = server.url + "/benchmarks/webbench/files/"
    attempts = [
        "..%2Fsecret.txt",
        "..%2F..%2F..%2F..%2F..%2F..%2Fetc%2Fpasswd",
        "%2Fetc%2Fpasswd",
        "scenarios/..%2F..%2Fsecret.txt",
        "scenarios%2F..%2F..%2Fsecret.txt",
        "scenarios/fixtures/link.txt",
        "scenarios/fixtures/dir-link/secret.txt",
        "scenarios/fixtures/%00notes.txt",
        "scenarios",
    ]
    for path in attempts:
        answer = httpx.get(base + path, timeout=30)
        assert answer.status_code == 404, path
        assert "the secret" not in answer.text and "root:" not in answer.text, path
    raw = httpx.Client(base_url=server.url, timeout=30)
    for path in (
        "/benchmarks/webbench/files/../../secret.txt",
        "/benchmarks/webbench/files/./../secret.txt",
    ):
        answer = raw.send(raw.build_request("GET", path))  # sent as written, not normalised
        assert answer.status_code == 404 and "the secret" not in answer.text, path
    for artifact in ("..%2F..%2Fetc%2Fpasswd", "stdout%2F..%2F..%2Fsecret.txt", "patch.txt"):
        answer = httpx.get(f"{server.url}/attempts/{filled.payload_attempt}/{artifact}", timeout=30)
        assert answer.status_code == 404 and "root:" not in answer.text, artifact
    fixture = httpx.get(base + "scenarios/fixtures/notes.txt", timeout=30)
    assert fixture.status_code == 200 and fixture.text == "fixture notes\n"  # what it is for
    assert (filled.benchmark_root / "scenarios" / "main.yaml").read_text() == BENCHMARK_YAML
