"""`benchyard serve --read-only` in a real browser (issue 24, item 5): the scenario editor shows
its fields as text with no form or save button, and no page offers a button that would change
something (queue, rerun, rescore, cancel). Screenshots at 390, 768 and 1,400 px."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.web.conftest import shoot
from tests.integration.web.support import Filled, serve_process

Project = tuple[Path, Filled]
WIDTHS = (390, 768, 1400)
CHANGING = re.compile(r"save|queue|rerun|rescore|cancel|accept|reject", re.IGNORECASE)


@pytest.fixture
def site(project: Project, db_url: str) -> Iterator[str]:
    """The filled store served read-only (the `page` fixture opens this server)."""
    with serve_process(db_url, project[0], "--read-only") as (_, url):
        yield url


def test_read_only_shows_no_editor_form_nor_any_button(
    page: Any, site: str, project: Project
) -> None:
    _, filled = project
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{site}/benchmarks/webbench/scenarios/s1/edit")
        assert "What is 2 + 2?" in page.locator("main").inner_text()
        assert "--read-only" in page.locator("main").inner_text()
        shoot(page, f"edit-read-only-{width}")
        for path in (
            "/benchmarks/webbench/scenarios/s1/edit",
            f"/runs/{filled.baseline}",
            "/queue",
        ):
            page.goto(site + path)
            assert page.locator("main form[method=post], main textarea").count() == 0, path
            changing = page.locator("main button").filter(has_text=CHANGING)
            assert changing.count() == 0, path  # a GET form's `filter` button stays
            assert page.locator("header.top .badge", has_text="read-only").is_visible()
