"""A static copy in a real browser (issue 24, item 7): `benchyard view-bundle` of two runs, served
by a plain `python -m http.server`, opened in chromium: the runs list leads to a run, its drawer
opens in place (from the copy's own fragment file), the comparison leads to a scenario side by
side, and its report is there as JSON, while a page it does not hold (a benchmark's) is named
without a link; no script runs but the copy's own file, and the Content-Security-Policy of its meta
element holds (a violation is a console error, which fails the test). Screenshots at three
widths."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchyard.store.store import Store
from benchyard.web.bundle import write_bundle
from tests.e2e.web.conftest import shoot
from tests.integration.web.file_server import file_server
from tests.integration.web.support import Filled

Project = tuple[Path, Filled]
WIDTHS = (390, 768, 1400)


def test_a_bundle_opens_from_a_file_server(
    page: Any, store: Store, project: Project, tmp_path: Path
) -> None:
    directory, filled = project
    out = tmp_path / "bundle"
    write_bundle(store, [filled.baseline, filled.candidate], out, (directory,))
    with file_server(out) as url:
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(url + "/")
            assert page.locator("table.runs tbody tr.run-row").count() == 2
            shoot(page, f"bundle-runs-{width}")
            page.locator("table.runs a", has_text=filled.candidate[:8]).click()
            page.wait_for_url(f"**/runs/{filled.candidate}/")
            page.locator("table.attempt-table a", has_text="s2").click()
            drawer = page.locator("#drawer.open")
            drawer.wait_for(state="visible")
            assert "<script>" in drawer.locator("pre[data-answer]").inner_text()
            assert page.evaluate("() => window.__xss") is None and page.title() != "owned"
            shoot(page, f"bundle-drawer-{width}")
            page.goto(url + "/compare/")
            page.locator("table.matrix a", has_text="s2").first.click()
            page.wait_for_url("**/compare/side/*/")
            assert page.locator(".side > section.side-run").count() == 2
            shoot(page, f"bundle-side-{width}")
        page.goto(f"{url}/runs/{filled.candidate}/")
        assert page.locator("h1 a", has_text="webbench").count() == 0  # no benchmark page here
        assert page.locator("h1 span.unlinked", has_text="webbench").count() == 1
        report = page.locator("a", has_text="report (JSON)").get_attribute("href")
        assert report == f"/runs/{filled.candidate}/report.json"
        assert page.request.get(url + report).json()["run"]["id"] == filled.candidate
