"""Every page over HTTP, against a real uvicorn on loopback: what each shows, as HTML and as JSON,
with the same figures as the library the CLI calls."""

from __future__ import annotations

import html as markup
import json

import httpx
import pytest

from benchyard.report.build import build_report
from benchyard.report.compare import compare_runs
from benchyard.store.store import Store
from tests.integration.web.support import Filled, ServerThread

PAGES = (
    "/runs",
    "/runs/{baseline}",
    "/attempts/{final_try}",
    "/compare?run={baseline}&run={candidate}",
    "/benchmarks",
    "/benchmarks/webbench",
    "/benchmarks/webbench?tab=history",
    "/benchmarks/webbench?tab=evolution",
    "/queue",
    "/benchmarks/webbench/scenarios/s1/edit",
)


def _paths(filled: Filled) -> list[str]:
    return [page.format(**vars(filled)) for page in PAGES]


def _timeless(page: dict[str, object]) -> dict[str, object]:
    """The page without what moves with the clock (a lease's seconds left)."""
    for worker in page.get("workers", []):  # type: ignore[attr-defined]
        worker.pop("lease_left_sec")
    return page


def test_every_page_answers_html_and_the_same_json_under_api_and_by_accept(
    server: ServerThread, filled: Filled
) -> None:
    with httpx.Client(base_url=server.url, cookies=server.cookies, timeout=30) as client:
        for path in _paths(filled):
            html = client.get(path)
            assert html.status_code == 200, (path, html.text[:500])
            assert html.headers["content-type"].startswith("text/html"), path
            assert "<!doctype html>" in html.text.lower(), path
            twin = markup.escape("/api" + path)
            assert f'This page as JSON: <a href="{twin}">' in html.text, path
            by_api = client.get("/api" + path)
            by_accept = client.get(path, headers={"accept": "application/json"})
            assert by_api.headers["content-type"] == "application/json", path
            assert _timeless(by_api.json()) == _timeless(by_accept.json()), path


def test_runs_list_filters_by_benchmark_version_agent_commit_status_and_date(
    server: ServerThread, filled: Filled
) -> None:
    def ids(**query: str) -> list[str]:
        answer = server.get("/api/runs", params=query, timeout=30)
        assert answer.status_code == 200, answer.text
        return [row["id"] for row in answer.json()["rows"]]

    everything = [filled.queued, filled.other_version, filled.candidate, filled.baseline]
    assert ids() == everything  # newest first
    assert ids(benchmark="webbench", agent="beta") == [filled.other_version]
    assert ids(commit="bbbb22") == [filled.candidate]
    assert ids(status="running") == [filled.queued]  # a worker claimed one of its attempts
    assert ids(version="2.0") == [filled.other_version]
    assert ids(version="2222") == [filled.other_version]  # a content hash prefix
    assert ids(since="2026-11-30", until="2026-11-30") == everything
    assert ids(since="2026-12-01") == []
    assert ids(benchmark="elsewhere") == []
    bad = server.get("/api/runs", params={"since": "yesterday"}, timeout=30)
    assert bad.status_code == 400 and "YYYY-MM-DD" in bad.json()["error"]


def test_run_rows_carry_accuracy_interval_errors_cost_and_duration(
    server: ServerThread, filled: Filled
) -> None:
    rows = {row["id"]: row for row in server.get("/api/runs", timeout=30).json()["rows"]}
    baseline, candidate = rows[filled.baseline], rows[filled.candidate]
    assert (baseline["passed"], baseline["counted"], baseline["errors"]) == (3, 4, 0)
    assert (
        baseline["accuracy"] == 0.75
        and baseline["accuracy_ci95"][0] < 0.75 < baseline["accuracy_ci95"][1]
    )
    assert (candidate["passed"], candidate["counted"], candidate["errors"]) == (2, 3, 1)
    assert candidate["cost_usd"] == pytest.approx(0.0021)
    assert baseline["duration_sec"] == 60.0
    assert rows[filled.other_version]["subset"] is True
    assert rows[filled.queued]["active"] is True and rows[filled.queued]["status"] == "running"


def test_run_page_shows_the_reports_summary_categories_checks_and_failures(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    page = server.get(f"/api/runs/{filled.candidate}", timeout=30).json()
    report = build_report(store, store.get_run(filled.candidate)).model_dump(mode="json")
    assert page["summary"] == report["summary"]
    assert {row["category"]: row["raw"] for row in page["categories"]} == {
        name: counts["raw"] for name, counts in report["categories"].items()
    }
    assert all(row["accuracy_ci95"] for row in page["categories"])
    assert {row["check_type"]: (row["passed"], row["total"]) for row in page["checks"]} == {
        name: (c["passed"], c["total"]) for name, c in report["checks"].items()
    }
    assert page["failure_total"] == 2
    assert {(f["scenario_id"], f["cause"]) for f in page["failures"]} == {
        (f["scenario_id"], f["cause"]) for f in report["failures"]
    }
    html = server.get(f"/runs/{filled.candidate}", timeout=30).text
    assert "the sandbox could not start" in html
    assert "66.7%" in html  # 2 of 3 counted


def test_attempts_table_pages_sorts_and_filters(server: ServerThread, filled: Filled) -> None:
    def scenarios(**query: object) -> tuple[list[str], dict[str, int]]:
        answer = server.get(f"/api/runs/{filled.baseline}", params=query, timeout=30)
        assert answer.status_code == 200, answer.text
        table = answer.json()["attempts"]
        return [row["scenario_id"] for row in table["rows"]], table["paging"]

    assert scenarios()[0] == ["s1", "s2", "s3", "s4"]
    assert scenarios(sort="scenario", order="desc")[0] == ["s4", "s3", "s2", "s1"]
    for query, expected in (
        ({"verdict": "failed"}, ["s3"]),
        ({"verdict": ["failed", "passed"], "category": "text"}, ["s3", "s4"]),
        ({"category": "text"}, ["s3", "s4"]),
        ({"category": "none"}, []),
        ({"check": "equals", "check_outcome": "failed"}, ["s3"]),
        ({"scenario": "2"}, ["s2"]),
        ({"flag": "any"}, []),
    ):
        rows, paging = scenarios(**query)
        assert rows == expected and paging["total"] == len(expected), query
    rows, paging = scenarios(per_page=2, page=2)
    assert rows == ["s3", "s4"] and (paging["total"], paging["pages"], paging["first"]) == (4, 2, 3)
    superseded_shown = server.get(f"/api/runs/{filled.baseline}", timeout=30).json()
    s4 = next(r for r in superseded_shown["attempts"]["rows"] if r["scenario_id"] == "s4")
    assert (s4["id"], s4["try_number"]) == (filled.final_try, 2)
    refused = server.get(f"/api/runs/{filled.baseline}", params={"sort": "evil"}, timeout=30)
    assert refused.status_code == 400 and "sort" in refused.json()["error"]


def test_drawer_shows_every_try_with_its_fault_and_the_scenario(
    server: ServerThread, filled: Filled
) -> None:
    drawer = server.get(f"/api/attempts/{filled.final_try}", timeout=30).json()
    tries = [
        (t["try_number"], t["superseded"], t["failure_kind"], t["shown"]) for t in drawer["tries"]
    ]
    assert tries == [(1, True, "provider_unavailable", False), (2, False, None, True)]
    assert drawer["tries"][0]["cause"] == "the provider answered 503 three times"
    assert drawer["scenario"]["turns"] == ["Say bye."]
    assert drawer["scenario"]["file"] == "scenarios/main.yaml"
    superseded = server.get(f"/api/attempts/{filled.superseded_try}", timeout=30).json()
    assert superseded["attempt"]["superseded"] is True
    assert [t["shown"] for t in superseded["tries"]] == [True, False]


def test_drawer_shows_the_timeline_the_judges_criteria_output_and_patch(
    server: ServerThread, filled: Filled
) -> None:
    drawer = server.get(f"/api/attempts/{filled.payload_attempt}", timeout=30).json()
    events = drawer["timeline"]
    assert [e["kind"] for e in events] == [
        "message",
        "message",
        "tool_call",
        "tool_result",
        "message",
    ]
    model_call = events[1]
    assert (model_call["ttft_sec"], model_call["tokens_in"], model_call["tokens_out"]) == (
        0.25,
        12,
        7,
    )
    assert model_call["cost_usd"] == 0.0021 and model_call["offset_sec"] == 1.5
    assert model_call["reasoning"].startswith("thinking") and model_call["model"] == "fake-model"
    assert events[2]["tool"] == "calculator" and events[4]["judge"] is True
    rubric = next(c for c in drawer["checks"] if c["label"] == "rubric")
    assert [(c["number"], c["met"]) for c in rubric["criteria"]] == [(1, True), (2, False)]
    assert rubric["explanation"] == "half of the criteria are met"
    assert drawer["stdout"].startswith("stdout says") and drawer["stderr"].startswith("stderr says")
    kinds = [line["kind"] for line in drawer["patch"]]
    assert kinds == ["file", "file", "file", "hunk", "del", "add"]
    fragment = server.get(f"/attempts/{filled.payload_attempt}?fragment=1", timeout=30)
    assert "<html" not in fragment.text and "Trajectory" in fragment.text
    page = server.get(
        f"/runs/{filled.candidate}",
        params={"attempt": filled.payload_attempt},
        timeout=30,
    )
    assert 'class="drawer open"' in page.text and "half of the criteria are met" in page.text


def test_artifacts_are_plain_text_from_the_store(server: ServerThread, filled: Filled) -> None:
    stdout = server.get(f"/attempts/{filled.payload_attempt}/stdout", timeout=30)
    assert stdout.headers["content-type"].startswith("text/plain")
    assert stdout.headers["x-content-type-options"] == "nosniff"
    assert stdout.text.startswith("stdout says <script>")
    trajectory = server.get(f"/attempts/{filled.payload_attempt}/trajectory", timeout=30)
    assert [event["kind"] for event in trajectory.json()][:2] == ["message", "message"]
    patch = server.get(f"/attempts/{filled.payload_attempt}/patch", timeout=30)
    assert patch.text.startswith("diff --git")
    assert server.get(f"/attempts/{filled.payload_attempt}/secrets", timeout=30).status_code == 404
    assert server.get(f"/attempts/{'0' * 32}/stdout", timeout=30).status_code == 404


def test_compare_two_runs_is_the_librarys_comparison_with_only_the_rows_that_differ(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    query = {"run": [filled.baseline, filled.candidate]}
    page = server.get("/api/compare", params=query, timeout=30).json()
    expected = compare_runs(
        store, [store.get_run(filled.baseline), store.get_run(filled.candidate)]
    )
    unlisted = expected.model_copy(update={"scenarios": [], "unchanged_listed": False})
    assert page["comparison"] == json.loads(unlisted.model_dump_json())  # its rows are the grid's
    assert [(row["scenario_id"], row["verdicts"]) for row in page["grid"]] == [
        (row.scenario_id, row.verdicts) for row in expected.scenarios if len(set(row.verdicts)) > 1
    ]
    candidate = page["comparison"]["candidates"][0]
    assert (
        candidate["pass_to_fail"],
        candidate["fail_to_pass"],
        candidate["counted_to_error"],
    ) == (1, 1, 1)
    assert [row["scenario_id"] for row in page["grid"]] == ["s2", "s3", "s4"]  # flips first
    assert page["grid"][0]["verdicts"] == ["passed", "failed"]
    everything = server.get(
        "/api/compare", params={**query, "differ_only": "false"}, timeout=30
    ).json()
    assert len(everything["grid"]) == 4
    html = server.get("/compare", params=query, timeout=30).text
    assert "pass→fail" in html and "McNemar" in html


def test_compare_refuses_other_versions_unless_asked_and_grids_several_runs(
    server: ServerThread, filled: Filled
) -> None:
    three = {"run": [filled.baseline, filled.candidate, filled.other_version]}
    refused = server.get("/api/compare", params=three, timeout=30).json()
    assert refused["comparison"] is None and "version" in refused["error"]
    allowed = server.get(
        "/api/compare", params={**three, "allow_mismatch": "true"}, timeout=30
    ).json()
    assert allowed["error"] is None
    assert len(allowed["runs"]) == 3
    grid = {row["scenario_id"]: row["verdicts"] for row in allowed["grid"]}
    assert grid["s2"] == ["passed", "failed", "failed"]
    assert grid["s3"] == ["failed", "passed", None]
    assert "s1" not in grid


def test_benchmark_pages_list_scenarios_history_and_evolution(
    server: ServerThread, filled: Filled
) -> None:
    listing = server.get("/api/benchmarks", timeout=30).json()["rows"]
    by_name = {row["name"]: row for row in listing}
    assert by_name["webbench"]["editable"] is True and by_name["webbench"]["scenarios"] == 4
    assert by_name["webbench"]["runs"] == 4
    assert by_name["starter"]["origin"] == "built-in" and by_name["starter"]["editable"] is False
    page = server.get("/api/benchmarks/webbench", timeout=30).json()
    assert [s["id"] for s in page["scenarios"]] == ["s1", "s2", "s3", "s4"]
    assert page["scenarios"][0]["checks"] == ["equals"] and page["scenarios"][0]["line"] == 2
    history = server.get("/api/benchmarks/webbench?tab=history", timeout=30).json()
    assert [row["id"] for row in history["history"]] == [
        filled.queued,
        filled.other_version,
        filled.candidate,
        filled.baseline,
    ]
    assert history["history"][-1]["commit"] == "aaaa1111aaaa1111"


def test_evolution_marks_version_changes_and_subsets_and_pools_by_commit(
    server: ServerThread, filled: Filled
) -> None:
    evolution = server.get("/api/benchmarks/webbench?tab=evolution", timeout=30).json()["evolution"]
    overall = [p for p in evolution["points"] if p["category"] is None]
    assert [(p["key"], p["subset"]) for p in overall] == [
        (filled.baseline, False),
        (filled.candidate, False),
        (filled.other_version, True),
    ]
    assert [(p["passed"], p["counted"]) for p in overall] == [(3, 4), (2, 3), (1, 2)]
    assert evolution["agents"] == ["alpha", "beta"]
    assert evolution["categories"] == ["math", "text"]
    chart = evolution["charts"][0]
    assert len(chart["marks"]) == 1 and chart["marks"][0]["label"].startswith("2.0")
    beta = next(s for s in chart["series"] if s["name"] == "beta")
    assert [p["hollow"] for p in beta["points"]] == [True] and beta["paths"] == []
    alpha = next(s for s in chart["series"] if s["name"] == "alpha")
    assert len(alpha["paths"]) == 1 and alpha["paths"][0].startswith("M")
    math = [p for p in evolution["points"] if p["category"] == "math" and p["agent"] == "alpha"]
    assert [(p["passed"], p["counted"]) for p in math] == [(2, 2), (1, 2)]
    by_commit = server.get(
        "/api/benchmarks/webbench",
        params={"tab": "evolution", "by": "commit", "agent": "alpha"},
        timeout=30,
    ).json()["evolution"]
    keys = [p["key"] for p in by_commit["points"] if p["category"] is None]
    assert keys == ["aaaa1111aaaa1111", "bbbb2222bbbb2222"]
    assert by_commit["charts"][0]["marks"] == []
    svg = server.get("/benchmarks/webbench?tab=evolution", timeout=30).text
    assert "<svg" in svg and "benchmark changed" in svg


def test_queue_page_shows_queued_claimed_and_finished_attempts_and_workers(
    server: ServerThread, filled: Filled
) -> None:
    page = server.get("/api/queue", timeout=30).json()
    runs = {row["run"]["id"]: row for row in page["runs"]}
    queued = runs[filled.queued]
    assert (queued["queued"], queued["claimed"], queued["done"]) == (3, 1, 0)
    assert [a["state"] for a in page["attempts"]] == ["claimed", "queued", "queued", "queued"]
    assert page["attempts"][0]["worker"] == filled.worker
    [worker] = page["workers"]
    assert worker["worker"] == filled.worker and worker["held"] == 1
    assert worker["lease_left_sec"] > 0
    assert "oracle" in page["agents"] and "webbench" in page["benchmarks"]


def test_progress_of_a_run_as_json_and_as_server_sent_events(
    server: ServerThread, filled: Filled
) -> None:
    progress = server.get(f"/api/runs/{filled.queued}/progress", timeout=30).json()
    assert (progress["active"], progress["queued"], progress["claimed"], progress["finished"]) == (
        True,
        3,
        1,
        0,
    )
    stream_url = f"{server.url}/runs/{filled.baseline}/events"
    with httpx.stream("GET", stream_url, cookies=server.cookies, timeout=30) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        text = "".join(stream.iter_text())
    events = [block for block in text.split("\n\n") if block.strip()]
    assert events[0].startswith("event: progress")
    assert json.loads(events[0].split("data: ", 1)[1])["finished"] == 4
    assert events[-1].startswith("event: end")
    stream_url = f"{server.url}/runs/{filled.queued}/events"
    with httpx.stream("GET", stream_url, cookies=server.cookies, timeout=30) as stream:
        first = next(stream.iter_lines())
    assert first == "event: progress"


def test_unknown_runs_attempts_and_benchmarks_are_404(server: ServerThread) -> None:
    assert "This page as JSON" not in server.get("/runs/ffffffff").text  # no JSON twin to link
    for path in ("/runs/ffff", "/api/runs/nope!", "/attempts/x", "/benchmarks/none", "/nowhere"):
        answer = server.get(path, headers={"accept": "application/json"}, timeout=30)
        assert answer.status_code == 404, path
        assert answer.json()["error"]


def test_a_cost_nobody_knows_shows_as_unknown(server: ServerThread, filled: Filled) -> None:
    """The baseline's attempts carry no cost (no price, none claimed): never $0.0000."""
    html = server.get(f"/runs/{filled.baseline}", timeout=30).text
    assert '<span class="label">cost</span><span class="value">unknown</span>' in html
    assert "$0.0000" not in html and "judge unknown" not in html
