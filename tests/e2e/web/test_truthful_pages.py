"""What the pages say is true, in a real browser (issue 24, items 1, 4 and 5): compare's deltas
read as the CLI's, a page past the end says so and leads to the last page, the evolution charts
take the page's width with labels that never repeat and a rerun merged into its commit, a rerun's
page leads to its merged view and back, a rescore leads to its new run from the queue page, and a
refused queue form names its own controls. Screenshots at 390, 768 and 1,400 px."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchyard.store.store import Store
from tests.e2e.web.conftest import shoot
from tests.integration.web.support import Filled, rerun_of_the_baseline

Project = tuple[Path, Filled]
WIDTHS = (390, 768, 1400)


def _at_each_width(page: Any, address: str) -> Iterator[int]:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(address)
        yield width


def test_compare_shows_deltas_in_points(page: Any, site: str, project: Project) -> None:
    _, filled = project
    for width in _at_each_width(
        page, f"{site}/compare?run={filled.baseline}&run={filled.candidate}"
    ):
        delta = page.locator('section.candidate [data-delta="accuracy"]').inner_text()
        assert delta[0] in "+-" and delta.endswith(" pts"), delta
        interval = page.locator("section.candidate .figure.big .ci").inner_text()
        assert re.fullmatch(r"[+-]\d+\.\d to [+-]\d+\.\d pts \(95% CI\)", interval), interval
        shoot(page, f"compare-deltas-{width}")


def test_a_page_past_the_end_leads_to_the_last(page: Any, site: str, project: Project) -> None:
    _, filled = project
    address = f"{site}/runs/{filled.baseline}?page=3000&per_page=2"
    for width in _at_each_width(page, address):
        told = page.locator("nav.pager.past-end").first
        assert "page 3000 is past the end: 4 in 2 pages" in told.inner_text()
        assert page.locator("table.attempt-table tbody tr.attempt-row").count() == 0
        shoot(page, f"run-past-the-end-{width}")
        told.locator("a", has_text="last").click()
        page.wait_for_url("**page=2**")
        assert page.locator("table.attempt-table tbody tr.attempt-row").count() == 2


def test_evolution_charts_fill_the_page_with_labels_once_and_a_rerun_merged(
    page: Any, site: str, project: Project, store: Store
) -> None:
    _, filled = project
    rerun_of_the_baseline(store, filled)
    address = f"{site}/benchmarks/webbench?tab=evolution&by=commit"
    for width in _at_each_width(page, address):
        charts = page.locator("figure.chart")
        assert charts.count() >= 1
        for index in range(charts.count()):
            chart = charts.nth(index)
            labels = chart.locator("svg > text[text-anchor=middle]").all_text_contents()
            assert labels and len(labels) == len(set(labels)), labels  # each commit once
            figure, svg = chart.bounding_box(), chart.locator("svg.plot").bounding_box()
            assert svg["width"] >= figure["width"] - 2, (width, figure, svg)  # the page's width
        overall = charts.first.locator("g.series").first.locator("circle")
        assert overall.count() == 2  # the rerun is merged into its commit's point
        shoot(page, f"evolution-by-commit-{width}")


def test_a_reruns_page_leads_to_its_merged_view_and_back(
    page: Any, site: str, project: Project, store: Store
) -> None:
    _, filled = project
    rerun = rerun_of_the_baseline(store, filled)
    for width in _at_each_width(page, f"{site}/runs/{rerun}"):
        accuracy = page.locator("[data-figure=accuracy]")
        assert accuracy.inner_text() == "100.0%"  # s3 alone, passed on its rerun
        page.locator("a[data-merged=on]").click()
        page.wait_for_url("**merged=true**")
        assert (
            "as benchyard report --merged counts them" in page.locator(".merged-view").inner_text()
        )
        assert accuracy.inner_text() == "100.0%"  # 4/4: the rerun's s3 replaces the failed one
        assert page.locator("table.attempt-table tbody tr.attempt-row").count() == 1  # its own
        shoot(page, f"rerun-merged-{width}")
        page.locator("a[data-merged=off]").click()
        page.wait_for_url(lambda url: "merged" not in url)
        assert page.locator("a[data-merged=on]").count() == 1


def test_a_rescore_leads_to_its_new_run_from_the_queue_page(
    page: Any, site: str, project: Project
) -> None:
    _, filled = project
    page.goto(f"{site}/runs/{filled.candidate}")
    page.locator(".actions form[action$='/rescore'] button").click()
    page.wait_for_url("**/queue?rescoring=**")
    listed = page.locator("section.rescores table.runs tbody tr.run-row")
    for _ in range(180):  # the rescore is a process of its own: reload until it has finished
        if listed.count() and "finished" in listed.first.inner_text():
            break
        page.wait_for_timeout(1_000)
        page.reload()
    assert "finished" in listed.first.inner_text()
    new_run = listed.first.locator("a").first.inner_text()
    shoot(page, "queue-rescored")
    listed.first.locator("a").first.click()
    page.wait_for_url(f"**/runs/{new_run}*")
    assert new_run in page.locator("h1").inner_text()


@pytest.fixture
def command_agent(project: Project) -> None:
    """A declared command agent, in the benchyard.yaml the server reads at its start."""
    directory, _ = project
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "benchyard.yaml").write_text(
        "agents:\n  shell:\n    kind: command\n    command: cat\n", encoding="utf-8"
    )


def test_a_refused_queue_form_names_its_controls(
    command_agent: None, page: Any, site: str, project: Project
) -> None:
    for width in _at_each_width(page, f"{site}/queue"):
        form = page.locator("form.enqueue-form")
        form.locator("select[name=benchmark]").select_option("webbench")
        form.locator("select[name=agent]").select_option("shell")
        form.locator("select[name=sandbox]").select_option("none")
        form.locator("button[type=submit]").click()
        told = page.locator("p.refused[data-message]")
        told.wait_for(state="visible")
        text = told.inner_text()
        assert "tick 'allow unsandboxed'" in text, text
        assert "--allow-unsandboxed" not in text.replace("benchyard serve --allow-unsandboxed", "")
        shoot(page, f"queue-refused-{width}")
