"""Finding things in a real browser (issue 24, item 6): a full-text search of the attempts table,
the drawer walked with the keyboard (j/k, arrows, Escape), ANSI colours drawn as colours and a
right-to-left override shown as its code point. Screenshots at 390, 768 and 1,400 px."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchyard.store.store import Store
from tests.e2e.web.conftest import shoot
from tests.integration.web.hostile import HOSTILE_RUN, add_hostile_run
from tests.integration.web.support import Filled

Project = tuple[Path, Filled]
WIDTHS = (390, 768, 1400)


@pytest.fixture
def hostile(store: Store, project: Project) -> list[str]:
    return add_hostile_run(store, project[1], attempts=4)


def test_a_search_narrows_the_attempts_table(
    page: Any, site: str, project: Project, hostile: list[str]
) -> None:
    for width in _hostile_run_at_each_width(page, site):
        assert page.locator("table.attempt-table tbody tr.attempt-row").count() == 4
        page.fill('input[name="q"]', '"wrong total"')
        page.locator("form.filters button[type=submit]").click()
        page.wait_for_url("**q=*")
        rows = page.locator("table.attempt-table tbody tr.attempt-row")
        assert rows.count() == 1
        assert "invoice-[U+202E]fdp.exe" in rows.first.inner_text()
        shoot(page, f"search-{width}")


def test_the_drawer_walks_the_table_with_the_keyboard(
    page: Any, site: str, project: Project, hostile: list[str]
) -> None:
    for width in _hostile_run_at_each_width(page, site):
        page.locator("table.attempt-table a", has_text="invoice-").click()
        drawer = page.locator("#drawer.open")
        drawer.wait_for(state="visible")
        _assert_colours_drawn_and_inert(page)
        shoot(page, f"drawer-ansi-{width}")
        page.keyboard.press("j")
        page.wait_for_function("() => location.search.includes('" + hostile[1] + "')")
        assert "plain-001" in drawer.locator("h2").inner_text()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => location.search.includes('" + hostile[2] + "')")
        page.keyboard.press("k")
        page.wait_for_function("() => location.search.includes('" + hostile[1] + "')")
        page.keyboard.press("ArrowLeft")
        page.wait_for_function("() => location.search.includes('" + hostile[0] + "')")
        assert not page.locator('#drawer a[data-drawer-step="previous"]').is_visible()
        page.keyboard.press("Escape")
        page.locator("#drawer").wait_for(state="hidden")


def _hostile_run_at_each_width(page: Any, site: str) -> Iterator[int]:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{site}/runs/{HOSTILE_RUN}")
        yield width


def _assert_colours_drawn_and_inert(page: Any) -> None:
    red = page.locator("#drawer pre[data-answer] span.ansi-red")
    assert red.inner_text().startswith("FAILED <script>")
    colour = red.evaluate("e => getComputedStyle(e).color")
    plain = page.locator("#drawer pre[data-answer]").evaluate("e => getComputedStyle(e).color")
    assert colour != plain
    assert red.evaluate("e => getComputedStyle(e).fontWeight") in ("700", "bold")
    assert "[U+202E]" in page.locator("#drawer h2").inner_text()
    assert page.evaluate("() => window.__xss") is None
