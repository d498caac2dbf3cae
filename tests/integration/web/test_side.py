"""Runs next to each other (issue 24, item 3): a scenario's answers, checks and trajectories from
2 or 3 runs side by side, compare rows linking both attempts, runs ticked on a list or a
benchmark's history taken to a filled comparison (the oldest the baseline), the runs list sorted."""

from __future__ import annotations

from tests.integration.web.support import Filled, ServerThread


def test_a_scenario_of_two_or_three_runs_side_by_side(server: ServerThread, filled: Filled) -> None:
    runs = f"{filled.baseline},{filled.candidate},{filled.other_version}"
    side = server.get("/api/compare/side", params={"runs": runs, "scenario": "s2"}).json()
    assert [c["run"]["id"] for c in side["columns"]] == [
        filled.baseline,
        filled.candidate,
        filled.other_version,
    ]
    answers = [c["detail"]["answer"] for c in side["columns"]]
    assert answers[0] == "4" and "<script>" in answers[1] and answers[2] == "5"
    assert side["columns"][1]["detail"]["checks"] and side["columns"][1]["detail"]["timeline"]
    html = server.get("/compare/side", params={"runs": runs, "scenario": "s2"}).text
    assert html.count('class="side-run"') == 3
    assert html.count('<section class="timeline">') == 3
    assert "&lt;script&gt;" in html and "<script>window" not in html


def test_a_run_without_the_scenario_has_an_empty_column(
    server: ServerThread, filled: Filled
) -> None:
    runs = f"{filled.baseline},{filled.other_version}"
    side = server.get("/api/compare/side", params={"runs": runs, "scenario": "s4"}).json()
    assert side["columns"][0]["detail"]["attempt"]["id"] == filled.final_try  # the final try
    assert side["columns"][1]["detail"] is None


def test_side_by_side_needs_two_or_three_runs_and_a_scenario(
    server: ServerThread, filled: Filled
) -> None:
    for runs in (filled.baseline, ",".join([filled.baseline] * 4)):
        answer = server.get("/compare/side", params={"runs": runs, "scenario": "s1"})
        assert answer.status_code == 400 and "two or three runs" in answer.text
    answer = server.get("/compare/side", params={"runs": f"{filled.baseline},{filled.candidate}"})
    assert answer.status_code == 400 and "scenario" in answer.text


def test_compare_rows_link_both_attempts_and_the_side_by_side_view(
    server: ServerThread, filled: Filled
) -> None:
    page = server.get("/compare", params={"run": [filled.baseline, filled.candidate]}).text
    side = f"/compare/side?runs={filled.baseline}%2C{filled.candidate}&amp;scenario=s2&amp;epoch=1"
    assert side in page
    for run_id in (filled.baseline, filled.candidate):
        assert f"/compare/attempt?run={run_id}&amp;scenario=s2&amp;epoch=1" in page
    cell = server.get(
        "/compare/attempt",
        params={"run": filled.baseline, "scenario": "s4", "epoch": 1},
        follow_redirects=False,
    )
    assert cell.status_code == 303
    assert cell.headers["location"] == f"/runs/{filled.baseline}?attempt={filled.final_try}#drawer"
    missing = server.get("/compare/attempt", params={"run": filled.other_version, "scenario": "s4"})
    assert missing.status_code == 404


def test_ticked_runs_go_to_a_filled_comparison_oldest_first(
    server: ServerThread, filled: Filled
) -> None:
    ticked = server.get(
        "/compare/pick",
        params={"run": [filled.candidate, filled.baseline]},  # newest first, as the list is
        follow_redirects=False,
    )
    assert ticked.status_code == 303
    assert ticked.headers["location"] == f"/compare?run={filled.baseline}&run={filled.candidate}"
    runs_page = server.get("/runs").text
    assert 'form id="pick-runs"' in runs_page
    assert f'name="run" value="{filled.candidate}" form="pick-runs"' in runs_page
    history = server.get("/benchmarks/webbench", params={"tab": "history"}).text
    assert f'name="run" value="{filled.baseline}" form="pick-history"' in history


def test_the_runs_list_sorts_by_its_columns(server: ServerThread, filled: Filled) -> None:
    def order(**params: str) -> list[str]:
        return [row["id"] for row in server.get("/api/runs", params=params).json()["rows"]]

    newest_first = order()
    assert newest_first[-1] == filled.baseline
    assert order(sort="started", order="asc") == newest_first[::-1]
    assert order(sort="agent", order="desc")[0] == filled.other_version  # beta
    by_attempts = order(sort="attempts", order="asc")
    assert by_attempts[0] == filled.other_version  # 2 planned, the others 4
    # accuracy: baseline 3/4, candidate 2/3 (its error left out), other 1/2, queued none (last)
    by_accuracy = [filled.baseline, filled.candidate, filled.other_version, filled.queued]
    assert order(sort="accuracy", order="desc") == by_accuracy
    assert order(sort="accuracy", order="asc") == [*by_accuracy[2::-1], filled.queued]
    page = server.get("/runs", params={"sort": "agent", "order": "asc"}).text
    assert 'data-sort="agent">agent ▲' in page
    assert 'data-sort="accuracy">accuracy [95% CI]<' in page
    refused = server.get("/runs", params={"sort": "accuracy; drop"})
    assert refused.status_code == 400 and "sort:" in refused.text
