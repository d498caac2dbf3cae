"""A real browser for the web UI's end-to-end tests: Debian's chromium driven by Playwright (no
browser is downloaded; scripts/ensure-browser.sh installs chromium), a fresh profile per test, and
a real `benchyard serve` process over a filled store."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchyard.store.store import Store
from tests.integration.web.support import SERVE_TOKEN, Filled, fill_store, serve_process

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(__file__).resolve().parents[3] / "build" / "screenshots"


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    """Playwright's driver for one module: its sync API keeps an event loop running in this
    thread until it stops, which would break every later test that runs one."""
    if not CHROMIUM.exists():
        pytest.fail("no /usr/bin/chromium: run scripts/ensure-browser.sh (make test does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        yield driver


@pytest.fixture
def page(playwright: Any, site: str) -> Iterator[Any]:
    """A page in a fresh chromium profile (closed before the server stops); the test fails on any
    console error or page error (a Content-Security-Policy violation is one), but that of a
    form sent back with its problems."""
    with tempfile.TemporaryDirectory(prefix="benchyard-chromium-") as profile:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            args=FLAGS,
            headless=True,
            viewport={"width": 1400, "height": 950},
        )
        problems: list[str] = []
        tab = context.pages[0] if context.pages else context.new_page()
        tab.on("console", lambda m: problems.append(m.text) if _unexpected(m) else None)
        tab.on("pageerror", lambda error: problems.append(str(error)))
        tab.set_default_timeout(30_000)
        tab.goto(f"{site}/runs?token={SERVE_TOKEN}")  # let in, as from the address serve printed
        assert tab.url == f"{site}/runs", tab.url  # the token left the address for a cookie
        try:
            yield tab
        finally:
            context.close()
        assert problems == [], problems


def _unexpected(message: Any) -> bool:
    """An error in the console, but a form sent back with its problems: the editor's (422) or
    the queue form's refusal (400 at /queue/runs)."""
    refused_form = "the server responded with a status of 422" in message.text
    refused_queue = "status of 400" in message.text and str(
        message.location.get("url", "")
    ).endswith("/queue/runs")
    return bool(message.type == "error" and not refused_form and not refused_queue)


@pytest.fixture
def project(store: Store, tmp_path: Path) -> tuple[Path, Filled]:
    directory = tmp_path / "project"
    return directory, fill_store(store, directory / "webbench")


@pytest.fixture
def site(project: tuple[Path, Filled], db_url: str) -> Iterator[str]:
    with serve_process(db_url, project[0]) as (_, url):
        yield url


def shoot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
