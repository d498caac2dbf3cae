"""`benchyard serve` as a real process: only with its token, given once in the address it prints
and then kept in a cookie: on loopback a new one at each start, kept nowhere; on any other address
one printed once and stored hashed."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import httpx

from benchyard.store.store import Store
from tests.integration.web.support import Filled, serve_process

TOKEN_LINE = re.compile(r"\?token=([A-Za-z0-9_-]+)")


def test_loopback_needs_the_token_it_prints_a_new_one_each_start(
    store: Store, filled: Filled, db_url: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    tokens = []
    for _ in range(2):
        with serve_process(db_url, project, token=None) as (process, url):
            assert process.stderr is not None
            [token] = TOKEN_LINE.findall(process.stderr.readline())  # the address to open
            tokens.append(token)
            assert httpx.get(url + "/api/runs", timeout=30).status_code == 401
            with httpx.Client(base_url=url, timeout=30) as client:
                entry = client.get(f"/runs?token={token}")
                assert entry.status_code == 303 and entry.headers["location"] == "/runs"
                runs = client.get("/api/runs")  # the cookie lets it in from now on
                assert runs.status_code == 200 and len(runs.json()["rows"]) == 4
            bearer = {"authorization": f"Bearer {token}"}
            assert httpx.get(url + "/benchmarks", headers=bearer, timeout=30).status_code == 200
            if len(tokens) == 2:  # the first start's token is no longer good
                old = {"authorization": f"Bearer {tokens[0]}"}
                assert httpx.get(url + "/api/runs", headers=old, timeout=30).status_code == 401
    assert tokens[0] != tokens[1]
    assert not (project / ".benchyard" / "web-token.sha256").exists()  # kept nowhere


def test_another_address_needs_the_token_printed_once_and_stored_hashed(
    store: Store, filled: Filled, db_url: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    with serve_process(db_url, project, "--host", "0.0.0.0") as (process, url):
        refused = httpx.get(url + "/runs", timeout=30)
        assert refused.status_code == 401 and "token" in refused.text
        assert httpx.get(url + "/api/runs", timeout=30).status_code == 401
        assert httpx.get(url + "/runs?token=wrong", timeout=30).status_code == 401
        stored = (project / ".benchyard" / "web-token.sha256").read_text().strip()
        process.terminate()
        _, said = process.communicate(timeout=30)
    [token] = TOKEN_LINE.findall(said)
    assert stored == "sha256:" + hashlib.sha256(token.encode()).hexdigest()
    assert token not in stored
    with serve_process(db_url, project, "--host", "0.0.0.0") as (process, url):
        with httpx.Client(base_url=url, timeout=30) as client:
            entry = client.get(f"/runs?benchmark=webbench&token={token}")
            assert entry.status_code == 303
            assert entry.headers["location"] == "/runs?benchmark=webbench"  # the token left behind
            assert "httponly" in entry.headers["set-cookie"].lower()
            assert "samesite=strict" in entry.headers["set-cookie"].lower()
            assert client.get("/runs").status_code == 200  # the cookie lets it in from now on
        bearer = httpx.get(
            url + "/api/runs", headers={"authorization": f"Bearer {token}"}, timeout=30
        )
        assert bearer.status_code == 200
        process.terminate()
        _, said_again = process.communicate(timeout=30)
    assert token not in said_again and "?token=YOUR_TOKEN" in said_again  # shown once only


def test_a_given_token_is_required_even_on_loopback(
    store: Store, filled: Filled, db_url: str, tmp_path: Path
) -> None:
    with serve_process(db_url, tmp_path / "project", "--token", "s3cret-token-value") as (_, url):
        assert httpx.get(url + "/runs", timeout=30).status_code == 401
        ok = httpx.get(
            url + "/api/runs", headers={"authorization": "Bearer s3cret-token-value"}, timeout=30
        )
        assert ok.status_code == 200
