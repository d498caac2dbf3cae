"""Attacks on the web UI (docs/security.md, "The web UI"): agent output that carries markup, a
state change forged by another site, a request without the token on a non-loopback address, a
page reached through a rebound host name, and artifact URLs that try to leave the store."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from benchyard.store.schema import attempt_queue, runs
from benchyard.store.store import Store
from tests.integration.web.file_server import wait_for
from tests.integration.web.support import (
    BENCHMARK_YAML,
    IMAGE,
    SCRIPT,
    Filled,
    ServerThread,
    browser_client,
    csrf_of,
    fill_store,
    free_port,
    registered_routes,
    serve_process,
    served,
)
from tests.support import scenario, write_benchmark

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
        html = server.get(path, timeout=30).text
        assert SCRIPT not in html and IMAGE not in html, path
        assert "<script>window" not in html and "<img" not in html, path
        if path in showing:
            assert "&lt;script&gt;window.__xss" in html, path  # shown, as text
    drawer = server.get(f"/attempts/{filled.payload_attempt}", timeout=30).text
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
        answer = server.get(path, timeout=30)
        policy = answer.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy, path
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        assert answer.headers["x-content-type-options"] == "nosniff"
    artifact = server.get(f"/attempts/{filled.payload_attempt}/answer", timeout=30)
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
    documented = server.get("/api/openapi.json", timeout=30).json()["paths"]
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
    client = browser_client(server)
    good = csrf_of(client)
    form = {"benchmark": "webbench", "agent": "oracle", "field:stimulus": "owned"}
    before = _state(store, filled)
    for path in routes:
        attempts = {
            "no token": client.post(path, data=form),
            "a wrong token": client.post(path, data={**form, "csrf_token": "x" * 32}),
            "a token but no cookie": server.post(
                path, data={**form, "csrf_token": good}, timeout=30
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


# ---- the token, on every address ---------------------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "127.0.0.1"])
def test_every_server_refuses_every_request_without_its_token(
    store: Store, filled: Filled, tmp_path: Path, host: str
) -> None:
    """On every address, loopback included: anything on this machine reaches a loopback port."""
    token = "a-token-of-the-test-" + hashlib.sha256(os.urandom(8)).hexdigest()
    with served(store, tmp_path / "project", host=host, token=token) as server:
        url = server.url
        for path in (
            "/runs",
            "/api/runs",
            f"/runs/{filled.candidate}",
            f"/runs/{filled.queued}/events",
            f"/attempts/{filled.payload_attempt}/stdout",
            "/benchmarks/webbench/files/scenarios/fixtures/notes.txt",
            "/api/openapi.json",
        ):
            assert httpx.get(url + path, timeout=30).status_code == 401, path
            wrong = httpx.get(url + path, params={"token": token[:-1]}, timeout=30)
            assert wrong.status_code == 401, path
        posted = httpx.post(url + f"/runs/{filled.queued}/cancel", timeout=30)
        assert posted.status_code == 401 and store.get_run(filled.queued).status == "running"
        forged_cookie = httpx.get(url + "/runs", cookies={"benchyard_token": "guess"}, timeout=30)
        assert forged_cookie.status_code == 401
        assert httpx.get(url + "/static/benchyard.css", timeout=30).status_code == 200
        entry = httpx.get(url + "/runs", params={"token": token}, timeout=30)
        assert entry.status_code == 303
        bearer = httpx.get(url + "/api/runs", headers={"authorization": f"Bearer {token}"})
        assert bearer.status_code == 200


def test_loopback_answers_only_to_loopback_host_names(server: ServerThread) -> None:
    rebound = server.get("/api/runs", headers={"host": "attacker.example"}, timeout=30)
    assert rebound.status_code == 421
    for host in ("127.0.0.1", "localhost", f"localhost:{server.port}"):
        assert server.get("/api/runs", headers={"host": host}, timeout=30).status_code == 200


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
        answer = httpx.get(base + path, cookies=server.cookies, timeout=30)
        assert answer.status_code == 404, path
        assert "the secret" not in answer.text and "root:" not in answer.text, path
    raw = httpx.Client(base_url=server.url, cookies=server.cookies, timeout=30)
    for path in (
        "/benchmarks/webbench/files/../../secret.txt",
        "/benchmarks/webbench/files/./../secret.txt",
    ):
        answer = raw.send(raw.build_request("GET", path))  # sent as written, not normalised
        assert answer.status_code == 404 and "the secret" not in answer.text, path
    for artifact in ("..%2F..%2Fetc%2Fpasswd", "stdout%2F..%2F..%2Fsecret.txt", "patch.txt"):
        answer = server.get(f"/attempts/{filled.payload_attempt}/{artifact}", timeout=30)
        assert answer.status_code == 404 and "root:" not in answer.text, artifact
    fixture = httpx.get(base + "scenarios/fixtures/notes.txt", cookies=server.cookies, timeout=30)
    assert fixture.status_code == 200 and fixture.text == "fixture notes\n"  # what it is for
    assert (filled.benchmark_root / "scenarios" / "main.yaml").read_text() == BENCHMARK_YAML


# ---- a local process: the agent with the network -----------------------------------------------

PROBE_AGENT = """
import json, sys, urllib.error, urllib.parse, urllib.request
from http.cookiejar import CookieJar

web, mcp = sys.argv[1], sys.argv[2]
opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar := CookieJar()))


def status(request, data=None, headers=None):
    request = urllib.request.Request(request, data=data, headers=headers or {})
    try:
        with opener.open(request, timeout=20) as answer:
            return answer.status
    except urllib.error.HTTPError as refused:
        return refused.code


seen = {"public": status(web + "/static/benchyard.css"), "runs": status(web + "/runs")}
csrf = next((cookie.value for cookie in jar if cookie.name == "benchyard_csrf"), "")
form = {"benchmark": "webbench", "agent": "oracle", "sandbox": "none", "allow_unsandboxed": "true"}
seen["queue"] = status(
    web + "/api/queue/runs", urllib.parse.urlencode(form).encode(), {"x-csrf-token": csrf}
)
seen["reference"] = status(web + "/benchmarks/webbench/files/scenarios/main.yaml")
edit = {"field:stimulus": "owned", "csrf_token": csrf}
seen["editor"] = status(
    web + "/benchmarks/webbench/scenarios/s1/edit", urllib.parse.urlencode(edit).encode()
)
hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "a", "version": "1"}
}}
seen["mcp"] = status(mcp + "/mcp", json.dumps(hello).encode(), {
    "content-type": "application/json", "accept": "application/json, text/event-stream"
})
print(json.dumps(seen, sort_keys=True))
"""


@contextlib.contextmanager
def _mcp_process(cwd: Path, db_url: str) -> Iterator[str]:
    """`benchyard mcp --transport http` as a real process on loopback, with no token given."""
    port = free_port()
    command = [sys.executable, "-m", "benchyard", "mcp", "--transport", "http", "--port", str(port)]
    environment = {k: v for k, v in os.environ.items() if k != "BENCHYARD_MCP_TOKEN"}
    process = subprocess.Popen(
        [*command, "--db", db_url], cwd=cwd, env=environment, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(url + "/mcp", process, "mcp")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_an_agent_with_the_network_reaches_neither_the_web_ui_nor_mcp_without_their_tokens(
    store: Store, filled: Filled, tmp_path: Path, db_url: str
) -> None:
    """An agent run in bwrap with `--allow-network` tries, on loopback, what one did before: the
    web UI's CSRF cookie, then queueing a run of its code on the host, reading a reference,
    rewriting a scenario through the editor, and the MCP server over HTTP. Every one is refused:
    the servers made tokens the agent was never given."""
    project = tmp_path / "project"
    probe = base64.b64encode(PROBE_AGENT.encode()).decode()
    bench = write_benchmark(tmp_path / "attack", [scenario("probe", "x")])
    attacker_db = f"sqlite:///{tmp_path / 'attacker.db'}"
    queued_before = _state(store, filled)
    with (
        serve_process(db_url, project, token=None) as (_, web),
        _mcp_process(project, db_url) as mcp,
    ):
        command = f"python3 -c \"import base64; exec(base64.b64decode('{probe}'))\" {web} {mcp}"
        attack = ["run", str(bench), "--agent-cmd", command, "--sandbox", "bwrap"]
        ran = subprocess.run(
            [sys.executable, "-m", "benchyard", *attack, "--allow-network", "--db", attacker_db],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    attacker = Store.open(attacker_db)
    try:
        [attempt] = attacker.attempts(attacker.resolve_run("latest").id)
    finally:
        attacker.close()
    seen = json.loads(attempt.answer or "{}")
    assert seen.get("public") == 200, (attempt.answer, attempt.stderr, ran.stderr)  # it got there
    assert {key: seen[key] for key in seen if key != "public"} == dict.fromkeys(
        ("editor", "mcp", "queue", "reference", "runs"), 401
    )
    assert _state(store, filled) == queued_before  # nothing queued, cancelled or edited
    assert (filled.benchmark_root / "scenarios" / "main.yaml").read_text() == BENCHMARK_YAML


def test_queueing_a_run_without_a_sandbox_needs_the_servers_flag(
    store: Store, filled: Filled, tmp_path: Path
) -> None:
    """Even with the token: `--allow-unsandboxed` from the web runs the agent's code on the host,
    so the server must have been started with `benchyard serve --allow-unsandboxed`."""
    form = {"benchmark": "webbench", "agent": "oracle", "sandbox": "none"}
    form["allow_unsandboxed"] = "true"
    with served(store, tmp_path / "project") as server:
        client = browser_client(server)
        before = _state(store, filled)
        refused = client.post("/api/queue/runs", data={**form, "csrf_token": csrf_of(client)})
        assert refused.status_code == 400
        assert "benchyard serve --allow-unsandboxed" in refused.json()["message"]
        assert _state(store, filled) == before
    with served(store, tmp_path / "project", allow_unsandboxed=True) as server:
        client = browser_client(server)
        allowed = client.post("/api/queue/runs", data={**form, "csrf_token": csrf_of(client)})
        assert allowed.status_code == 200, allowed.text
        run = store.get_run(allowed.json()["run_id"])
        assert run.settings["allow_unsandboxed"] is True
