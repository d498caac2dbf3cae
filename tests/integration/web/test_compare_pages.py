"""The comparison's grid a page at a time (issue 24, item 2), through a real server: each `show`
pages through exactly the rows the library lists, in its order (the rows that differ, those a run
made worse, every row); a page past the end shows none; the report API streams the text that
`benchyard report --format json` writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchyard.report.build import build_report
from benchyard.report.compare import compare_runs
from benchyard.report.listing import strict_json
from benchyard.store.store import Store
from tests.integration.web.paged import CHANGED, REGRESSIONS, SCENARIOS, fill_paged
from tests.integration.web.support import ServerThread, served


@pytest.fixture
def paged(store: Store, tmp_path: Path) -> Iterator[tuple[ServerThread, str, str]]:
    baseline, candidate = fill_paged(store)
    with served(store, tmp_path) as server:
        yield server, baseline, candidate


def _every_page(server: ServerThread, query: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    rows, pagings, number = [], [], 1
    while True:
        shown = server.get("/api/compare", params={**query, "page": number}).json()
        assert shown["error"] is None
        rows += shown["grid"]
        pagings.append(shown["paging"])
        if number >= shown["paging"]["pages"]:
            return rows, pagings
        number += 1


def test_each_show_pages_through_the_librarys_rows_in_its_order(
    paged: tuple[ServerThread, str, str], store: Store
) -> None:
    server, baseline, candidate = paged
    library = compare_runs(store, [store.get_run(baseline), store.get_run(candidate)])
    every = [(row.scenario_id, row.epoch, row.verdicts) for row in library.scenarios]
    query = {"run": [baseline, candidate], "per_page": 40}
    for show, expected in (
        ("changed", [row for row in every if row[2][0] != row[2][1]]),
        ("regressions", [row for row in every if row[2][0] == "passed" and row[2][1] != "passed"]),
        ("all", every),
    ):
        rows, pagings = _every_page(server, {**query, "show": show})
        assert [(r["scenario_id"], r["epoch"], r["verdicts"]) for r in rows] == expected, show
        assert [r["differs"] for r in rows] == [v[0] != v[1] for _, _, v in expected]
        total = {"changed": CHANGED, "regressions": REGRESSIONS, "all": SCENARIOS}[show]
        assert [p["total"] for p in pagings] == [total] * len(pagings)
        assert len(pagings) == -(-total // 40)
        assert (pagings[-1]["first"], pagings[-1]["last"]) == ((len(pagings) - 1) * 40 + 1, total)
    older = server.get("/api/compare", params={**query, "differ_only": "false"}).json()
    assert older["show"] == "all" and older["paging"]["total"] == SCENARIOS


def test_a_page_past_the_end_shows_no_row_and_says_so(
    paged: tuple[ServerThread, str, str],
) -> None:
    server, baseline, candidate = paged
    query = {"run": [baseline, candidate], "page": 99}
    shown = server.get("/api/compare", params=query).json()
    assert shown["grid"] == [] and shown["paging"]["past_end"]
    html = server.get("/compare", params=query).text
    assert "page 99 is past the end" in html
    refused = server.get("/api/compare", params={**query, "show": "some"})
    assert refused.status_code == 400


def test_the_page_lists_its_rows_and_links_the_others(
    paged: tuple[ServerThread, str, str],
) -> None:
    server, baseline, candidate = paged
    html = server.get("/compare", params={"run": [baseline, candidate]}).text
    assert f"rows 1\u2013100 of {CHANGED}" in html
    assert "page 1 of 3" in html and "show=regressions" in html and "show=all" in html
    assert html.count('<tr class="differs">') == 100
    last = server.get("/compare", params={"run": [baseline, candidate], "page": 3}).text
    assert f"rows 201\u2013{CHANGED} of {CHANGED}" in last and "p-179" in last


def test_the_report_api_streams_the_clis_json(
    paged: tuple[ServerThread, str, str], store: Store
) -> None:
    server, _, candidate = paged
    answer = server.get(f"/api/runs/{candidate}/report")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/json")
    built = build_report(store, store.get_run(candidate))
    assert answer.text == strict_json(built.model_dump(mode="json"))
    assert answer.json()["summary"]["attempt_count"] == SCENARIOS
