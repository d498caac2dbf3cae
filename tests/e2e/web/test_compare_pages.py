"""A comparison with more changed rows than one page shows, in a real browser (issue 24, item 2):
the page links lead from the first page to the last row, the grid's filters (regressions, every
row) page on their own, and the pages fit a phone's width."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchyard.store.store import Store
from tests.e2e.web.conftest import shoot
from tests.integration.web.paged import CHANGED, REGRESSIONS, SCENARIOS, fill_paged
from tests.integration.web.support import Filled


@pytest.fixture
def paged(store: Store, project: tuple[Path, Filled]) -> tuple[str, str]:
    return fill_paged(store)


def _rows_shown(page: Any) -> str:
    return str(page.locator("section.grid p.grid-rows").inner_text())


def test_the_page_links_reach_the_last_changed_row(
    page: Any, site: str, paged: tuple[str, str]
) -> None:
    baseline, candidate = paged
    for width in (390, 768, 1400):  # the last one stays for the walk through the pages
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{site}/compare?run={baseline}&run={candidate}")
        assert _rows_shown(page) == f"rows 1\u2013100 of {CHANGED}"
        sizes = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert sizes[0] <= sizes[1] + 1, (width, sizes)
        shoot(page, f"compare-first-page-{width}")
    seen = []
    while True:
        seen += page.locator("table.matrix tbody tr td:first-child").all_inner_texts()
        following = page.locator("section.grid nav.pager").first.locator("a[rel=next]")
        if following.count() == 0:
            break
        following.click()
        page.wait_for_load_state("load")
    assert _rows_shown(page) == f"rows 201\u2013{CHANGED} of {CHANGED}"
    assert len(seen) == len(set(seen)) == CHANGED
    assert seen[0] == "p-000" and seen[-1] == "p-179"  # pass to fail first, errors changed last
    shoot(page, "compare-last-page-1400")
    page.locator("section.grid nav.pager").first.locator("a", has_text="first").click()
    page.wait_for_load_state("load")
    assert _rows_shown(page) == f"rows 1\u2013100 of {CHANGED}"
    page.locator("section.grid nav.pager").first.locator("a", has_text="last").click()
    page.wait_for_load_state("load")
    assert page.locator("table.matrix tbody tr").last.inner_text().startswith("p-179")


def test_the_grid_shows_regressions_or_every_row_a_page_at_a_time(
    page: Any, site: str, paged: tuple[str, str]
) -> None:
    baseline, candidate = paged
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{site}/compare?run={baseline}&run={candidate}&page=2")
    page.locator("p.grid-show a", has_text="regressions").click()
    page.wait_for_load_state("load")
    assert "page=" not in page.url  # a new filter starts on its first page
    assert _rows_shown(page) == f"rows 1\u2013100 of {REGRESSIONS}"
    shoot(page, "compare-regressions-390")
    page.locator("p.grid-show a", has_text="every row").click()
    page.wait_for_load_state("load")
    page.locator("section.grid nav.pager").first.locator("a", has_text="last").click()
    page.wait_for_load_state("load")
    assert _rows_shown(page) == f"rows 201\u2013{SCENARIOS} of {SCENARIOS}"
    assert page.locator("table.matrix tbody tr").last.inner_text().startswith("p-229")
    sizes = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert sizes[0] <= sizes[1] + 1, sizes
