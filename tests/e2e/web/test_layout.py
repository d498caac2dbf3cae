"""The web UI on every screen (issue 24, item 1) and what only a browser shows (item 4): at 390,
768 and 1,400 px the main pages never get wider than the screen, the nav stays inside the header,
a run page with long causes keeps a height in proportion to its rows (long cells clamped, opened
by a click), Categories never runs over Checks with 5-digit counts, the patch has no blank line
between its lines, and the rest of a long output loads on demand as text. Screenshots go to
build/screenshots/ (NAME-WIDTH.png)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchyard.store.records import CheckRecord
from benchyard.store.store import Store
from tests.e2e.web.conftest import shoot
from tests.integration.web.support import T0, Filled
from tests.support import attempt_record, run_record

Project = tuple[Path, Filled]
WIDE = "f0f0f0f0f0f0f0f0"
ATTEMPTS = 10_400  # 5-digit counts in the Categories and Checks tables
LONG_CAUSES = 120
WIDTHS = (390, 768, 1400)
ROW_BUDGET_PX = 120  # a clamped row: three lines of cause and its padding, with room to spare
PAGE_BUDGET_PX = 4_000  # the head, summary, tables' heads and filters of a run page at 390 px


@pytest.fixture
def wide_run(store: Store, project: Project) -> str:
    """A finished run of 10,400 attempts in two categories, its first 120 scenarios failed with
    a cause of about 1,500 characters and three checks each."""
    _, filled = project
    store.create_run(
        run_record(
            WIDE,
            benchmark_name="webbench",
            benchmark_path=str(filled.benchmark_root),
            agent_name="alpha",
            started_at=T0,
            finished_at=T0,
            planned_attempts=ATTEMPTS,
        )
    )
    cause = " ".join(
        f"the agent's answer differed from the reference at step {n}" for n in range(26)
    )
    batch = []
    for n in range(ATTEMPTS):
        failed = n < LONG_CAUSES or n % 3 == 0
        checks = [
            CheckRecord(i, kind, kind, not failed, float(not failed), 1.0, "r")
            for i, kind in enumerate(("equals", "contains", "regex_match"))
        ]
        batch.append(
            attempt_record(
                WIDE,
                f"{n:032x}",
                f"scenario-{n:05d}",
                category="reading-comprehension" if n % 2 else "arithmetic-word-problems",
                verdict="failed" if failed else "passed",
                score=0.0 if failed else 1.0,
                cause=cause if n < LONG_CAUSES else ("differs" if failed else None),
                checks=checks if n < LONG_CAUSES else [],
            )
        )
        if len(batch) == 2_000:
            store.record_attempts(batch)
            batch = []
    store.record_attempts(batch)
    return WIDE


def _pages(filled: Filled) -> dict[str, str]:
    return {
        "runs": "/runs",
        "run": f"/runs/{WIDE}",
        "compare": f"/compare?run={filled.baseline}&run={filled.candidate}",
        "queue": "/queue",
        "benchmark": "/benchmarks/webbench",
        "benchmark-evolution": "/benchmarks/webbench?tab=evolution",
        "attempt": f"/attempts/{filled.payload_attempt}",
    }


def test_every_main_page_fits_every_screen(
    page: Any, site: str, project: Project, wide_run: str
) -> None:
    _, filled = project
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in _pages(filled).items():
            page.goto(site + path)
            page.wait_for_load_state("load")
            shoot(page, f"{name}-{width}")
            sizes = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
            assert sizes[0] <= sizes[1] + 1, (name, width, sizes)
            _assert_the_nav_is_inside_the_header(page, name, width)
            if name == "run":
                _assert_the_run_page_is_in_proportion(page, width)
                _assert_categories_keep_to_their_column(page, width)


def _assert_the_nav_is_inside_the_header(page: Any, name: str, width: int) -> None:
    header = page.locator("header.top").bounding_box()
    links = page.locator("header.top nav a")
    assert links.count() >= 5
    for index in range(links.count()):
        link = links.nth(index)
        assert link.is_visible(), (name, width, index)
        box = link.bounding_box()
        assert (
            box["x"] >= header["x"] - 1
            and box["x"] + box["width"] <= header["x"] + header["width"] + 1
        ), (name, width, link.inner_text(), box, header)
        assert (
            box["y"] >= header["y"] - 1
            and box["y"] + box["height"] <= header["y"] + header["height"] + 1
        ), (name, width, link.inner_text(), box, header)


def _assert_the_run_page_is_in_proportion(page: Any, width: int) -> None:
    rows = (
        page.locator("table.attempt-table tbody tr").count()
        + page.locator("section.failures tbody tr").count()
    )
    assert rows == 60, rows  # 50 attempts and 10 failures, each with a long cause
    height = page.evaluate("() => document.documentElement.scrollHeight")
    assert height <= PAGE_BUDGET_PX + ROW_BUDGET_PX * rows, (width, height, rows)
    narrowest = page.evaluate(
        "() => Math.min(...Array.from(document.querySelectorAll('table.attempt-table td.cause'))"
        ".map(cell => cell.getBoundingClientRect().width))"
    )
    assert narrowest >= 150, (width, narrowest)  # never a word per line


def _assert_categories_keep_to_their_column(page: Any, width: int) -> None:
    """Each table of the Categories, Checks and flags columns ends inside its own column (what
    is wider scrolls in its box), and the columns do not overlap."""
    overflow = page.evaluate(
        """() => Array.from(document.querySelectorAll('.columns table')).map(table => {
            const column = table.closest('section').getBoundingClientRect();
            const clip = table.closest('.scroll');
            const right = clip ? Math.min(table.getBoundingClientRect().right,
                                          clip.getBoundingClientRect().right)
                               : table.getBoundingClientRect().right;
            return right - column.right;
        })"""
    )
    assert overflow and max(overflow) <= 1, (width, overflow)
    assert "10,400" in page.locator("section.summary").inner_text() or "10400" in (
        page.locator("section.summary").inner_text()
    )


def test_a_long_cause_opens_on_a_click(
    page: Any, site: str, project: Project, wide_run: str
) -> None:
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{site}/runs/{WIDE}")
    cell = page.locator("table.attempt-table td.cause .clamp").first
    cell.wait_for(state="visible")
    assert "cut" in (cell.get_attribute("class") or "")
    closed = cell.bounding_box()["height"]
    cell.click()
    assert "open" in (cell.get_attribute("class") or "")
    opened = cell.bounding_box()["height"]
    assert opened > 3 * closed, (closed, opened)
    assert "at step 25" in cell.inner_text()
    shoot(page, "run-cause-opened-390")


def test_the_patch_has_no_blank_line_between_its_lines(
    page: Any, site: str, project: Project
) -> None:
    _, filled = project
    page.goto(f"{site}/attempts/{filled.payload_attempt}")
    diff = page.locator("section.patch pre.diff")
    diff.wait_for(state="visible")
    lines = diff.locator("span").count()
    assert lines == 6
    text = diff.inner_text()
    assert "\n\n" not in text.strip("\n"), text
    assert (
        text.strip("\n").splitlines()[-1]
        == "+<script>window.__xss = 1; document.title = 'owned'</script>"
    )
    measured = diff.evaluate(
        "pre => [pre.clientHeight, parseFloat(getComputedStyle(pre).lineHeight)]"
    )
    height, line = measured
    assert height <= (lines + 1) * line + 16, (height, line, lines)  # padding included
    shoot(page, "patch")


def test_the_rest_of_a_long_output_loads_on_demand_as_text(
    page: Any, site: str, project: Project, store: Store
) -> None:
    _, filled = project
    ending = '<img src="/nothing" onerror="window.__xss = 3">the end'
    stdout = "line of output\n" * 8_000 + ending
    store.create_run(run_record("e1e1e1e1e1e1e1e1", benchmark_path=str(filled.benchmark_root)))
    store.record_attempts([attempt_record("e1e1e1e1e1e1e1e1", "e1" * 16, "s1", stdout=stdout)])
    page.goto(f"{site}/attempts/{'e1' * 16}")
    output = page.locator(f"#stdout-{'e1' * 16}")
    assert "the end" not in output.inner_text()
    page.locator("section.output button[data-rest]").click()
    page.wait_for_function(
        "id => document.getElementById(id).textContent.endsWith('the end')",
        arg=f"stdout-{'e1' * 16}",
    )
    assert output.inner_text().rstrip("\n").endswith(ending)
    assert page.locator("section.output img").count() == 0
    assert page.evaluate("() => window.__xss") is None
    assert page.locator("section.output button[data-rest]").count() == 0
