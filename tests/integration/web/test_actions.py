"""What the web UI changes goes through the library and the queue: a run queued from a form is
left for `benchyard worker` (the server executes nothing), a rerun is linked to its run, a rescore
runs apart, a cancel keeps what finished, and `--read-only` serves none of it."""

from __future__ import annotations

import time
from pathlib import Path

from sqlalchemy import func, select

from benchyard.store.schema import attempt_queue, attempts, runs
from benchyard.store.store import Store
from tests.integration.web.support import (
    Filled,
    ServerThread,
    browser_client,
    csrf_of,
    registered_routes,
    served,
)


def _count(store: Store, table: object, *where: object) -> int:
    with store.engine.connect() as connection:
        query = select(func.count()).select_from(table).where(*where)  # type: ignore[arg-type]
        return int(connection.execute(query).scalar_one())


def _queue_states(store: Store, run_id: str) -> list[str]:
    with store.engine.connect() as connection:
        query = select(attempt_queue.c.state).where(attempt_queue.c.run_id == run_id)
        return sorted(connection.execute(query).scalars())


def test_a_run_queued_from_the_form_waits_for_a_worker(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    client = browser_client(server)
    form = {
        "benchmark": "webbench",
        "agent": "oracle",
        "epochs": "2",
        "filters": "category:math",
        "sandbox": "none",
        "csrf_token": csrf_of(client),
    }
    answer = client.post("/queue/runs", data=form)
    assert answer.status_code == 303, answer.text
    run_id = answer.headers["location"].rsplit("/", 1)[1]
    run = store.get_run(run_id)
    assert (run.status, run.planned_attempts, run.agent_name) == ("queued", 4, "oracle")
    assert run.settings["filters"] == ["category:math"] and run.settings["epochs"] == 2
    assert _queue_states(store, run_id) == ["queued"] * 4
    assert _count(store, attempts, attempts.c.run_id == run_id) == 0  # nothing executed here
    page = client.get(answer.headers["location"])
    assert page.status_code == 200 and "0/4" in page.text


def test_queueing_answers_json_and_refuses_what_the_library_refuses(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    client = browser_client(server)
    token = {"x-csrf-token": csrf_of(client), "accept": "application/json"}
    queued = client.post(
        "/api/queue/runs", data={"benchmark": "webbench", "agent": "oracle"}, headers=token
    )
    assert queued.status_code == 200 and queued.json()["ok"] is True
    assert store.get_run(queued.json()["run_id"]).status == "queued"
    before = _count(store, runs)
    for form, words in (
        ({"benchmark": "webbench", "agent": "nobody"}, "no agent named 'nobody'"),
        ({"benchmark": "nothing", "agent": "oracle"}, "no benchmark 'nothing'"),
        ({"benchmark": "webbench", "agent": "oracle", "filters": "id:zzz"}, "matches the filters"),
        ({"benchmark": "webbench", "agent": "oracle", "limit": "many"}, "limit"),
    ):
        refused = client.post("/api/queue/runs", data=form, headers=token)
        assert refused.status_code == 400 and words in refused.json()["message"], refused.text
    assert _count(store, runs) == before
    html = client.post(
        "/queue/runs",
        data={"benchmark": "webbench", "agent": "nobody", "csrf_token": csrf_of(client)},
    )
    assert html.status_code == 400 and "refused: " in html.text and "nobody" in html.text


def test_the_form_takes_the_network_as_run_does(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    """`network` takes what `run --network` takes, written one way; `allow_network` is its alias
    of `all`; a bad value or the two disagreeing is refused, and nothing is queued."""
    client = browser_client(server)
    token = {"x-csrf-token": csrf_of(client), "accept": "application/json"}
    form = {"benchmark": "webbench", "agent": "oracle"}
    for given, recorded in (
        ({}, "bridge"),
        ({"network": "none"}, "none"),
        ({"network": "API.example.com:443, api.example.com:443"}, "api.example.com:443"),
        ({"allow_network": "true"}, "all"),
    ):
        queued = client.post("/api/queue/runs", data={**form, **given}, headers=token)
        assert queued.status_code == 200, queued.text
        assert store.get_run(queued.json()["run_id"]).settings["network"] == recorded
    before = _count(store, runs)
    for given, words in (
        ({"network": "example.com"}, "network: 'example.com' is not HOST:PORT"),
        ({"network": "none", "allow_network": "true"}, "give one of them"),
    ):
        refused = client.post("/api/queue/runs", data={**form, **given}, headers=token)
        assert refused.status_code == 400 and words in refused.json()["message"], refused.text
    assert _count(store, runs) == before
    assert 'name="network"' in client.get("/queue").text


def test_rerun_queues_the_failed_attempts_linked_to_their_run(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    client = browser_client(server)
    answer = client.post(f"/runs/{filled.baseline}/rerun", data={"csrf_token": csrf_of(client)})
    assert answer.status_code == 303, answer.text
    rerun = store.get_run(answer.headers["location"].rsplit("/", 1)[1])
    assert rerun.parent_run_id == filled.baseline and rerun.status == "queued"
    with store.engine.connect() as connection:
        queued = connection.execute(
            select(attempt_queue.c.scenario_id).where(attempt_queue.c.run_id == rerun.id)
        ).scalars()
        assert sorted(queued) == ["s3"]  # the one failed attempt (s4 passed on its retry)


def test_cancel_stops_a_run_and_keeps_what_finished(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    client = browser_client(server)
    answer = client.post(f"/runs/{filled.queued}/cancel", data={"csrf_token": csrf_of(client)})
    assert answer.status_code == 303
    assert store.get_run(filled.queued).status == "cancelled"
    assert _queue_states(store, filled.queued) == ["cancelled"] * 4
    again = client.post(
        f"/api/runs/{filled.queued}/cancel", headers={"x-csrf-token": csrf_of(client)}
    )
    assert again.status_code == 400 and "already cancelled" in again.json()["message"]


def test_rescore_runs_in_a_process_of_its_own_into_a_linked_run(
    server: ServerThread, filled: Filled, store: Store, tmp_path: Path
) -> None:
    # The project's own modules named like the standard library's are not what the process runs.
    for shadow in ("queue.py", "typing.py"):
        (tmp_path / "project" / shadow).write_text("raise SystemExit('the project shadowed it')\n")
    client = browser_client(server)
    answer = client.post(f"/runs/{filled.baseline}/rescore", data={"csrf_token": csrf_of(client)})
    assert answer.status_code == 303 and answer.headers["location"].startswith("/queue?rescoring=")
    deadline = time.monotonic() + 120
    while True:
        with store.engine.connect() as connection:
            found = connection.execute(
                select(runs.c.id, runs.c.status).where(runs.c.rescored_from == filled.baseline)
            ).first()
        if found is not None and found.status == "finished":
            break
        log = tmp_path / "project" / ".benchyard" / "rescores" / f"{filled.baseline}.log"
        assert time.monotonic() < deadline, log.read_text() if log.exists() else "no log"
        time.sleep(0.2)
    assert _count(store, attempts, attempts.c.run_id == found.id) == 4
    assert "rescoring run" in client.get(answer.headers["location"]).text


def test_read_only_serves_no_state_changing_route(
    store: Store, filled: Filled, tmp_path: Path
) -> None:
    with served(store, tmp_path / "project", read_only=True) as server:
        client = browser_client(server)
        token = csrf_of(client)
        before = (_count(store, runs), _queue_states(store, filled.queued))
        for path in (
            "/queue/runs",
            f"/runs/{filled.queued}/cancel",
            f"/runs/{filled.baseline}/rerun",
            f"/runs/{filled.baseline}/rescore",
            "/benchmarks/webbench/scenarios/s1/edit",
            "/api/queue/runs",
        ):
            answer = client.post(
                path, data={"csrf_token": token, "benchmark": "webbench", "agent": "oracle"}
            )
            assert answer.status_code in (404, 405), path
        assert (_count(store, runs), _queue_states(store, filled.queued)) == before
        served_routes = registered_routes(server.server.config.app)
        assert len(served_routes) > 10 and not any("POST" in m for _, m in served_routes)
        for page in ("/queue", f"/runs/{filled.queued}", "/benchmarks/webbench"):
            html = client.get(page).text
            assert 'method="post"' not in html and "/edit" not in html, page
            assert "read-only" in html
