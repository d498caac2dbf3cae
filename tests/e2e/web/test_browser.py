"""The web UI in a real browser: every page, the scenario drawer, a run queued from the queue page
and executed by a real `benchyard worker`, a comparison, a scenario edit (an invalid one refused at
its field), and agent output carrying markup shown as text. Screenshots go to build/screenshots/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.web.conftest import shoot
from tests.integration.web.support import BENCHMARK_YAML, Filled

Project = tuple[Path, Filled]


def test_every_page_renders(page: Any, site: str, project: Project) -> None:
    _, filled = project
    pages = {
        "runs": ("/runs", "Runs"),
        "run": (f"/runs/{filled.candidate}", "Run b0b0b0b0"),
        "attempt": (f"/attempts/{filled.final_try}", "s4"),
        "compare": (f"/compare?run={filled.baseline}&run={filled.candidate}", "Compare runs"),
        "benchmarks": ("/benchmarks", "Benchmarks"),
        "benchmark-scenarios": ("/benchmarks/webbench", "webbench"),
        "benchmark-history": ("/benchmarks/webbench?tab=history", "webbench"),
        "benchmark-evolution": ("/benchmarks/webbench?tab=evolution", "webbench"),
        "queue": ("/queue", "Queue"),
        "edit": ("/benchmarks/webbench/scenarios/s1/edit", "Edit s1"),
    }
    for name, (path, heading) in pages.items():
        page.goto(site + path)
        assert heading in page.locator("h1, h2").first.inner_text(), name
        shoot(page, name)
    page.goto(site + "/benchmarks/webbench?tab=evolution")
    assert page.locator("figure.chart svg circle").count() >= 3
    assert page.locator("g.version-mark").first.is_visible()


def test_the_drawer_opens_from_the_attempts_table(page: Any, site: str, project: Project) -> None:
    _, filled = project
    page.goto(f"{site}/runs/{filled.baseline}")
    assert not page.locator("#drawer").is_visible()
    page.locator("table.attempt-table a", has_text="s4").click()
    drawer = page.locator("#drawer.open")
    drawer.wait_for(state="visible")
    assert "attempt=" + filled.final_try in page.url
    assert "superseded" in drawer.locator("section.tries").inner_text()
    assert "the provider answered 503 three times" in drawer.inner_text()
    assert "Say bye." in drawer.locator("section.scenario").inner_text()
    shoot(page, "drawer")
    drawer.locator("section.tries a", has_text="1").click()  # the superseded try, in place
    page.wait_for_function(
        "() => document.querySelector('#drawer tr.shown td').innerText.startsWith('1')"
    )
    page.locator("#drawer a[data-drawer-close]").click()
    page.locator("#drawer").wait_for(state="hidden")
    assert "attempt=" not in page.url


def test_agent_markup_renders_as_text(page: Any, site: str, project: Project) -> None:
    _, filled = project
    page.goto(f"{site}/runs/{filled.candidate}?attempt={filled.payload_attempt}")  # server-rendered
    _assert_inert(page)
    page.goto(f"{site}/runs/{filled.candidate}")
    page.locator("table.attempt-table a", has_text="s2").click()  # put in place by the script
    page.locator("#drawer.open").wait_for(state="visible")
    _assert_inert(page)
    shoot(page, "agent-markup-as-text")


def _assert_inert(page: Any) -> None:
    answer = page.locator("#drawer pre[data-answer]").inner_text()
    assert "<script>window.__xss = 1; document.title = 'owned'</script>" in answer
    assert '<img src="/nothing" onerror="window.__xss = 2">' in answer
    assert "stderr says <img" in page.locator("#drawer section.output").inner_text()
    assert page.evaluate("() => window.__xss") is None
    assert page.title() != "owned"
    assert page.locator("#drawer img, #drawer script").count() == 0


def test_a_run_queued_from_the_queue_page_is_run_by_a_worker(
    page: Any, site: str, project: Project, db_url: str
) -> None:
    directory, _ = project
    worker = subprocess.Popen(
        [sys.executable, "-m", "benchyard", "worker", "--db", db_url, "--poll", "0.2", "-j", "4"],
        cwd=directory,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        page.goto(site + "/queue")
        form = page.locator("form.enqueue-form")
        form.locator("select[name=benchmark]").select_option("webbench")
        form.locator("select[name=agent]").select_option("oracle")
        form.locator("input[name=epochs]").fill("2")
        form.locator("button[type=submit]").click()
        page.wait_for_url("**/runs/*")
        run_id = page.url.rsplit("/", 1)[1]
        status = page.locator(".run-head [data-field=status]")
        status.filter(has_text="finished").wait_for(timeout=180_000)
        page.wait_for_load_state("load")
        figure = page.locator("[data-figure=accuracy]").inner_text()
        assert figure == "100.0%", figure
        assert "8/8" in page.locator(".run-head .progress").inner_text()
        shoot(page, "queued-run-finished")
        page.goto(site + "/queue")
        row = page.locator("tr.queue-run", has_text=run_id[:8])
        assert "finished" in row.inner_text()
    finally:
        worker.terminate()
        _, errors = worker.communicate(timeout=60)
    assert worker.returncode in (0, -15), errors


def test_compare_two_runs_from_the_form(page: Any, site: str, project: Project) -> None:
    _, filled = project
    page.goto(site + "/compare")
    pickers = page.locator("form.compare-pick select[name=run]")
    pickers.nth(0).select_option(filled.baseline)
    pickers.nth(1).select_option(filled.candidate)
    page.locator("form.compare-pick button[type=submit]").click()
    page.wait_for_url("**/compare?*")
    candidate = page.locator("section.candidate")
    assert "1 pass→fail" in candidate.inner_text() and "1 fail→pass" in candidate.inner_text()
    rows = page.locator("table.matrix tbody tr")
    assert [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())] == [
        "s2",
        "s3",
        "s4",
    ]
    shoot(page, "compare-two-runs")


def test_edit_a_scenario_an_invalid_edit_is_refused_at_its_field(
    page: Any, site: str, project: Project
) -> None:
    _, filled = project
    file = filled.benchmark_root / "scenarios" / "main.yaml"
    page.goto(site + "/benchmarks/webbench")
    page.locator("#scenario-s1 a", has_text="edit").click()
    page.wait_for_url("**/scenarios/s1/edit")
    checks = page.locator("textarea[name='field:checks']")
    checks.fill('- type: equalz\n  value: "4"')
    page.locator("form.editor button[type=submit]").click()
    problem = page.locator(".field.invalid[data-field-name=checks] .problem")
    problem.wait_for(state="visible")
    assert "unknown check type 'equalz'" in problem.inner_text()
    assert file.read_text(encoding="utf-8") == BENCHMARK_YAML
    shoot(page, "edit-refused")
    page.locator("textarea[name='field:checks']").fill('- type: equals\n  value: "four"')
    page.locator("textarea[name='field:reference']").fill("four")
    page.locator("form.editor button[type=submit]").click()
    page.locator("p.saved").wait_for(state="visible")
    assert "saved scenario s1" in page.locator("p.saved").inner_text()
    written = file.read_text(encoding="utf-8")
    assert "  reference: four\n" in written and '      value: "four"\n' in written
    assert written.startswith("# Scenarios of the web tests. This comment must survive an edit.\n")
    assert "# text scenarios below" in written
    shoot(page, "edit-saved")
