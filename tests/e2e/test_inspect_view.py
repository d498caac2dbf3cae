"""An exported run opened in Inspect View itself (`inspect view`, the viewer Inspect AI ships,
in Debian's chromium): the sample's Transcript tab shows its model call and its tool call with the
result, and the agent's markup in that result is shown as text, never run."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchyard.interop.inspect_log import default_name, write_eval_log
from benchyard.interop.source import RunSource
from benchyard.runner.tool_events import call_event, result_event
from benchyard.runner.trajectory import message
from tests.support import attempt_record, run_record

CHROMIUM = Path("/usr/bin/chromium")
HOSTILE = "<img src=x onerror=alert(1)></script><script>alert(2)</script>"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def viewer(tmp_path: Path) -> Iterator[str]:
    """`inspect view` over a log directory holding one exported run, until the test ends."""
    asked = message("assistant", "", tokens_in=31, tokens_out=9, data={"source": "model"})
    assert asked.data is not None
    asked.data["tool_calls"] = [{"id": "k1", "name": "get_weather", "arguments": "{}"}]
    events = [
        message("user", "weather?"),
        asked,
        call_event("get_weather", {}, "call-1", 1),
        result_event("get_weather", HOSTILE, "call-1", error=False),
    ]
    attempt = attempt_record("r" * 16, "t" * 16, "weather", trajectory=events, answer="18")
    logs = tmp_path / "logs"
    run = run_record("r" * 16)
    write_eval_log(RunSource(run, [attempt], {}), logs / default_name(run))
    port = _free_port()
    inspect = Path(sys.executable).parent / "inspect"
    command = [str(inspect), "view", "--log-dir", str(logs), "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(url, timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def _open_the_sample(page: Any, viewer: str, log: str, sample: str) -> None:
    """Open the log from Inspect View's list, then its sample. Inspect View redraws that list
    as it polls the directory: on a loaded machine a click that waits for the entry to hold still
    (two animation frames) never finds it attached long enough, so the mouse clicks where it is
    at once; and a log it left loading for a minute is opened again (three times at most)."""
    from playwright.sync_api import Error as PlaywrightError

    for last in (False, False, True):
        page.goto(viewer)
        try:
            page.get_by_text(log).first.wait_for(state="visible")
            page.get_by_text(log).first.click(force=True)
            page.get_by_text(sample).first.click(timeout=60_000)
            return
        except PlaywrightError:  # a timeout, or the entry redrawn out of sight meanwhile
            if last:
                raise


def test_inspect_views_transcript_tab_shows_the_calls(viewer: str) -> None:
    if not CHROMIUM.exists():
        pytest.fail("no /usr/bin/chromium: run scripts/ensure-browser.sh (make test does)")
    from playwright.sync_api import expect, sync_playwright

    dialogs: list[str] = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(120_000)  # a hang's bound: chromium on a loaded machine
            page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
            _open_the_sample(page, viewer, "benchyard/a", "weather")
            page.get_by_text("Transcript", exact=True).first.click()
            page.get_by_text("get_weather").first.wait_for()
            # waited for, not read at once: the transcript renders on after its first event
            shown = {"timeout": 120_000}
            expect(page.get_by_text(HOSTILE).first).to_be_visible(**shown)  # the markup, as text
            expect(page.get_by_text("40 tokens").first).to_be_visible(**shown)  # any case
        finally:
            browser.close()
    assert dialogs == []
