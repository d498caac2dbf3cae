"""Runs next to each other in a real browser (issue 24, item 3): two runs ticked on the runs list
give a filled comparison, a compare row opens the scenario side by side (columns next to each
other on a wide screen, one under the other on a phone), two runs picked in a benchmark's history
give the comparison too, and the runs list sorts by a column. Screenshots at 390, 768, 1,400 px."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.web.conftest import shoot
from tests.integration.web.support import Filled

Project = tuple[Path, Filled]
WIDTHS = (390, 768, 1400)


def _tick_and_compare(page: Any, form: str, filled: Filled) -> None:
    for run_id in (filled.candidate, filled.baseline):
        page.locator(f'input[name="run"][form="{form}"][value="{run_id}"]').check()
    page.locator(f"form#{form} button[type=submit]").click()
    page.wait_for_url("**/compare?**")
    picked = page.locator("form.compare-pick select[name=run]")
    assert picked.nth(0).input_value() == filled.baseline  # the oldest is the baseline
    assert picked.nth(1).input_value() == filled.candidate
    assert page.locator("section.candidate").count() == 1


def test_ticked_runs_open_side_by_side_from_the_comparison(
    page: Any, site: str, project: Project
) -> None:
    _, filled = project
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{site}/runs")
        shoot(page, f"runs-pick-{width}")
        _tick_and_compare(page, "pick-runs", filled)
        page.locator("table.matrix a", has_text="s2").click()
        page.wait_for_url("**/compare/side?**")
        columns = page.locator(".side > section.side-run")
        assert columns.count() == 2
        assert "<script>" in columns.nth(1).locator("pre[data-answer]").inner_text()
        assert page.evaluate("() => window.__xss") is None
        first, second = (columns.nth(n).bounding_box() for n in (0, 1))
        if width == 1400:
            assert second["x"] > first["x"] + first["width"] - 1  # next to each other
        if width == 390:
            assert second["y"] >= first["y"] + first["height"] - 1  # one under the other
        sizes = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert sizes[0] <= sizes[1] + 1, (width, sizes)
        shoot(page, f"side-by-side-{width}")


def test_a_compare_cell_opens_that_runs_attempt(page: Any, site: str, project: Project) -> None:
    _, filled = project
    page.goto(f"{site}/compare?run={filled.baseline}&run={filled.candidate}")
    page.locator("table.matrix tr", has_text="s2").locator("td a.verdict, td a").nth(2).click()
    page.locator("#drawer.open").wait_for(state="visible")
    assert f"attempt={filled.payload_attempt}" in page.url


def test_history_pick_two_leads_to_a_filled_compare(page: Any, site: str, project: Project) -> None:
    _, filled = project
    page.goto(f"{site}/benchmarks/webbench?tab=history")
    _tick_and_compare(page, "pick-history", filled)
    shoot(page, "history-picked-compare")


def test_the_runs_list_sorts_by_a_column(page: Any, site: str, project: Project) -> None:
    _, filled = project
    page.goto(f"{site}/runs")
    page.locator("table.runs th a[data-sort=agent]").click()
    page.wait_for_url("**sort=agent**")
    first = page.locator("table.runs tbody tr.run-row").first.inner_text()
    assert filled.other_version[:8] in first  # agent beta, sorted down from the top
    page.locator("table.runs th a[data-sort=agent]").click()
    page.wait_for_url("**order=asc**")
    assert filled.other_version[:8] in page.locator("table.runs tbody tr.run-row").last.inner_text()


def test_the_runs_list_sorts_by_accuracy(page: Any, site: str, project: Project) -> None:
    _, filled = project
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{site}/runs")
        page.locator("table.runs th a[data-sort=accuracy]").click()
        page.wait_for_url("**sort=accuracy**")
        rows = page.locator("table.runs tbody tr.run-row")
        assert filled.baseline[:8] in rows.first.inner_text()  # 75 %, the best
        assert filled.queued[:8] in rows.last.inner_text()  # nothing counted yet: last
        page.locator("table.runs th a[data-sort=accuracy]").click()
        page.wait_for_url("**order=asc**")
        assert filled.other_version[:8] in rows.first.inner_text()  # 50 %, the worst
        assert filled.queued[:8] in rows.last.inner_text()  # still last
        shoot(page, f"runs-by-accuracy-{width}")


def test_three_runs_side_by_side_fit_every_screen(page: Any, site: str, project: Project) -> None:
    _, filled = project
    runs = f"{filled.baseline},{filled.candidate},{filled.other_version}"
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{site}/compare/side?runs={runs}&scenario=s2")
        columns = page.locator(".side > section.side-run")
        assert columns.count() == 3
        boxes = [columns.nth(n).bounding_box() for n in range(3)]
        if width == 1400:
            assert boxes[0]["y"] == boxes[1]["y"] == boxes[2]["y"]  # one row of three
            assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"]
        if width == 390:
            assert boxes[0]["y"] < boxes[1]["y"] < boxes[2]["y"]  # one under the other
        sizes = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert sizes[0] <= sizes[1] + 1, (width, sizes)
        shoot(page, f"side-by-side-three-{width}")
