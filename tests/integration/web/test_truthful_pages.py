"""What the pages say is true and readable (issue 24, items 4 and 5), over HTTP against a real
uvicorn: a long output is shown in part with the rest loaded on demand, a page past the end says
so, deltas read as the CLI's, the evolution chart has one point per commit with its reruns merged
and labels that differ, a rerun's page offers the merged view, a rescore's new run is linked and
listed, `--read-only` shows no editor, and a refusal names the form's own controls."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchyard.config import ProjectConfig
from benchyard.report.build import build_report
from benchyard.report.compare import compare_runs
from benchyard.report.compare_render import _delta_interval, _points
from benchyard.store.store import Store
from benchyard.web.app import create_app
from benchyard.web.config import WebConfig
from benchyard.web.drawer import OUTPUT_CHARS
from benchyard.web.tokens import new_token, token_hash
from tests.integration.web.support import (
    SCRIPT,
    Filled,
    ServerThread,
    browser_client,
    csrf_of,
    rerun_of_the_baseline,
    served,
)
from tests.support import attempt_record, run_record

# ---- item 4: rendering ----------------------------------------------------------------------------


def test_a_long_output_shows_its_first_characters_and_the_rest_comes_from_its_endpoint(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    stdout = f"{SCRIPT} begins\n" + "x" * (1024 * 1024) + f"\nends {SCRIPT}\n"
    store.create_run(run_record("e0e0e0e0e0e0e0e0", benchmark_path=str(filled.benchmark_root)))
    store.record_attempts(
        [attempt_record("e0e0e0e0e0e0e0e0", "e" * 32, "s1", stdout=stdout, stderr="short")]
    )
    html = server.get(f"/attempts/{'e' * 32}").text
    assert len(html) < 100_000, len(html)  # not the 1 MiB inlined
    assert "&lt;script&gt;window.__xss = 1" in html and SCRIPT not in html
    assert "ends &lt;script&gt;" not in html
    cut = len(stdout) - OUTPUT_CHARS
    assert f"{cut:,} more characters not shown" in html
    assert f'data-rest="/attempts/{"e" * 32}/stdout"' in html
    assert f'href="/attempts/{"e" * 32}/stdout"' in html
    whole = server.get(f"/attempts/{'e' * 32}/stdout")
    assert whole.headers["content-type"].startswith("text/plain")
    assert whole.headers["x-content-type-options"] == "nosniff"
    assert whole.text == stdout
    shown = server.get(f"/api/attempts/{'e' * 32}").json()
    assert shown["stdout"] == stdout[:OUTPUT_CHARS] and shown["stdout_cut"] == cut
    assert shown["stderr"] == "short" and shown["stderr_cut"] == 0
    fragment = server.get(f"/attempts/{'e' * 32}?fragment=1").text
    assert len(fragment) < 100_000 and "more characters not shown" in fragment


def test_a_page_past_the_end_says_so(server: ServerThread, filled: Filled) -> None:
    run_page = server.get(f"/runs/{filled.baseline}", params={"page": 3000, "per_page": 2})
    assert run_page.status_code == 200
    text = run_page.text
    assert "page 3000 is past the end: 4 in 2 pages" in text, text[-3000:]
    assert "of 4 · page 3000 of 2" not in text and "5999\u2013" not in text
    assert "page=2" in text  # a link to the last page
    paging = server.get(f"/api/runs/{filled.baseline}", params={"page": 3000, "per_page": 2})
    assert paging.json()["attempts"]["paging"] == {
        "page": 3000,
        "per_page": 2,
        "total": 4,
        "pages": 2,
        "past_end": True,
        "first": 0,
        "last": 0,
    }
    runs = server.get("/runs", params={"page": 9}).text
    assert "page 9 is past the end: 4 in 1 page" in runs
    last = server.get(f"/api/runs/{filled.baseline}", params={"page": 2, "per_page": 3}).json()
    assert last["attempts"]["paging"]["past_end"] is False
    assert (last["attempts"]["paging"]["first"], last["attempts"]["paging"]["last"]) == (4, 4)


def test_compare_shows_deltas_in_the_clis_words(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    comparison = compare_runs(
        store, [store.get_run(filled.baseline), store.get_run(filled.candidate)]
    )
    candidate = comparison.candidates[0]
    html = server.get(f"/compare?run={filled.baseline}&run={filled.candidate}").text
    shown = re.search(r'data-delta="accuracy">([^<]*)<', html)
    assert shown is not None and shown.group(1) == _points(candidate.accuracy_delta)
    assert shown.group(1).endswith(" pts") and shown.group(1)[0] in "+-"
    assert _delta_interval(candidate.accuracy_delta_ci95) in html
    errors = re.search(r'data-delta="error_rate">([^<]*)<', html)
    assert errors is not None and errors.group(1) == _points(candidate.error_rate_delta)
    for name, delta in candidate.categories.items():
        assert f"{_points(delta.delta)}</td>" in html, name
    section = html[html.index('<section class="candidate">') : html.index('<section class="grid">')]
    assert not re.search(r"[+-]?\d+\.\d%</td>", section)  # no delta as a bare percentage


def test_evolution_by_commit_is_one_point_per_commit_with_its_rerun_merged(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    rerun = rerun_of_the_baseline(store, filled)
    by_commit = server.get("/api/benchmarks/webbench", params={"tab": "evolution", "by": "commit"})
    evolution = by_commit.json()["evolution"]
    overall = [p for p in evolution["points"] if p["category"] is None and p["agent"] == "alpha"]
    commits = [p["commit"] for p in overall]
    assert len(commits) == len(set(commits)) == 2, overall  # baseline's and candidate's commits
    merged = next(p for p in overall if p["commit"] == "aaaa1111aaaa1111")
    report = build_report(store, store.get_run(rerun), merged=True)
    assert (merged["passed"], merged["counted"]) == (report.summary.passed, report.summary.counted)
    assert (merged["passed"], merged["counted"]) == (4, 4)  # s3 passed on its rerun
    assert merged["run_ids"] == [filled.baseline, rerun] and merged["subset"] is False
    for chart in evolution["charts"]:
        labels = [tick["label"] for tick in chart["x_ticks"]]
        assert len(labels) == len(set(labels)), labels
        for series in chart["series"]:
            xs = [(point["x"], point["hollow"]) for point in series["points"]]
            assert len(xs) == len(set(xs)), (chart["title"], series["name"], xs)
    by_run = server.get("/api/benchmarks/webbench", params={"tab": "evolution", "by": "run"})
    for chart in by_run.json()["evolution"]["charts"]:
        labels = [tick["label"] for tick in chart["x_ticks"]]
        assert len(labels) == len(set(labels)), labels  # the rerun started in the same minute
    html = server.get("/benchmarks/webbench", params={"tab": "evolution"}).text
    svgs = re.findall(r"<svg [^>]*viewBox[^>]*>", html)
    assert svgs and not any(re.search(r'\swidth="\d', svg) for svg in svgs), svgs


# ---- item 5: flows -------------------------------------------------------------------------------


def test_a_reruns_page_offers_the_merged_view_as_report_merged(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    rerun = rerun_of_the_baseline(store, filled)
    alone = server.get(f"/runs/{rerun}").text
    assert 'href="?merged=true"' in alone and "merged view" in alone
    page = server.get(f"/api/runs/{rerun}", params={"merged": "true"}).json()
    report = build_report(store, store.get_run(rerun), merged=True).model_dump(mode="json")
    assert page["merged"] is True and page["merged_runs"] == [filled.baseline, rerun]
    assert page["summary"] == report["summary"]
    assert {c["category"]: c["raw"] for c in page["categories"]} == {
        name: c["raw"] for name, c in report["categories"].items()
    }
    assert page["summary"]["accuracy"] == 1.0  # the rerun alone: 1/1, the baseline: 3/4
    assert [row["scenario_id"] for row in page["attempts"]["rows"]] == ["s3"]  # its own attempts
    html = server.get(f"/runs/{rerun}", params={"merged": "true"}).text
    assert "this rerun alone" in html and "benchyard report --merged" in html
    assert f"/runs/{filled.baseline}" in html
    own = server.get(f"/api/runs/{filled.baseline}", params={"merged": "true"}).json()
    assert own["merged"] is False  # a run that re-ran nothing has nothing to merge


def test_a_rescore_links_to_its_new_run_and_the_queue_page_lists_it(
    server: ServerThread, filled: Filled, store: Store, tmp_path: Path
) -> None:
    client = browser_client(server)
    answer = client.post(f"/runs/{filled.candidate}/rescore", data={"csrf_token": csrf_of(client)})
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    assert location.startswith(f"/queue?rescoring={filled.candidate}&since=")
    new = _finished_rescore(store, filled.candidate, tmp_path)
    told = client.get(location).text
    assert f"into run {new}" in told and f'href="/runs/{new}"' in told
    queue = client.get("/queue").text
    rescores = queue[queue.index('<section class="rescores">') :]
    assert f'href="/runs/{new}"' in rescores.split("</section>")[0]
    listed = client.get("/api/queue").json()["rescores"]
    assert [row["id"] for row in listed] == [new]
    assert listed[0]["rescored_from"] == filled.candidate and listed[0]["status"] == "finished"


def _finished_rescore(store: Store, original: str, tmp_path: Path) -> str:
    """The rescore's run once it finished, read through a store opened afresh."""
    from sqlalchemy import select

    from benchyard.store.schema import runs

    log = tmp_path / "project" / ".benchyard" / "rescores" / f"{original}.log"
    deadline = time.monotonic() + 180
    while True:
        fresh = Store.open(store.url)
        try:
            with fresh.engine.connect() as connection:
                found = connection.execute(
                    select(runs.c.id, runs.c.status, runs.c.started_at)
                    .where(runs.c.rescored_from == original)
                    .order_by(runs.c.started_at.desc())
                ).all()
        finally:
            fresh.close()
        if len(found) == 1 and found[0].status == "finished":
            return str(found[0].id)
        assert time.monotonic() < deadline, (found, log.read_text() if log.exists() else "no log")
        time.sleep(0.2)


def test_read_only_shows_no_editor_form_nor_save_button(
    store: Store, filled: Filled, tmp_path: Path
) -> None:
    with served(store, tmp_path / "project", read_only=True) as server:
        answer = server.get("/benchmarks/webbench/scenarios/s1/edit")
        assert answer.status_code == 200
        html = answer.text
        assert "<form" not in html and "<textarea" not in html and "<button" not in html
        assert "validate and save" not in html
        assert "--read-only" in html and "What is 2 + 2?" in html


@pytest.fixture
def with_a_command_agent(store: Store, filled: Filled, tmp_path: Path) -> Iterator[ServerThread]:
    token = new_token()
    config = WebConfig(
        store_url=store.url,
        project=ProjectConfig(agents={"shell": {"kind": "command", "command": "cat"}}),
        token_sha256=token_hash(token),
        benchmark_dirs=(tmp_path / "project",),
    )
    app = create_app(config, store=store, workdir=tmp_path / "project")
    with ServerThread(app, token=token) as server:
        yield server


def test_a_refusal_names_the_forms_controls_not_command_line_flags(
    with_a_command_agent: ServerThread,
) -> None:
    client = browser_client(with_a_command_agent)
    form = {"benchmark": "webbench", "agent": "shell", "sandbox": "none"}
    refused = client.post(
        "/api/queue/runs",
        data=form,
        headers={"x-csrf-token": csrf_of(client), "accept": "application/json"},
    )
    assert refused.status_code == 400, refused.text
    message = refused.json()["message"]
    assert "refusing to run agent commands" in message
    assert "tick 'allow unsandboxed'" in message, message
    assert not re.search(r"(?<!serve )--(allow|sandbox)", message), message
    assert "started with `benchyard serve --allow-unsandboxed`" in message  # ticking is not enough
    html = client.post("/queue/runs", data={**form, "csrf_token": csrf_of(client)})
    assert html.status_code == 400
    shown = html.text[html.text.index("refused: ") :].split("</p>")[0]
    assert "tick &#39;allow unsandboxed&#39;" in shown
    assert not re.search(r"(?<!serve )--(allow|sandbox)", shown), shown
