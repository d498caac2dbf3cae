"""`benchyard view-bundle` (issue 24, item 7): a static, read-only copy of the pages of some runs,
served by a plain `python -m http.server`: every link of its pages leads to a file it holds (a
page it does not hold, a benchmark's or JSON, is named without a link; each run's report is there
as the CLI's JSON), each page carries the Content-Security-Policy in a meta element and no inline script, and agent
output stays text. A run still running, or a directory in use, is refused with one line."""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx

from benchyard.report.build import build_report
from benchyard.report.listing import strict_json
from benchyard.store.store import Store
from benchyard.web.bundle import write_bundle
from tests.integration.web.file_server import file_server
from tests.integration.web.paged import CHANGED, fill_paged
from tests.integration.web.support import Filled, rerun_of_the_baseline
from tests.support import Cli


def test_a_bundle_holds_every_page_it_links(store: Store, filled: Filled, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    bundle = write_bundle(
        store, [filled.baseline, filled.candidate], out, (filled.benchmark_root.parent,)
    )
    assert bundle.run_ids == [filled.baseline, filled.candidate]
    pages = sorted(out.rglob("*.html"))
    assert (out / "compare" / "index.html").is_file() and (
        out / "static" / "benchyard.js"
    ).is_file()
    with file_server(out) as url, httpx.Client(base_url=url, timeout=30) as client:
        listing = client.get("/").text
        assert filled.baseline in listing and filled.candidate in listing
        assert filled.other_version not in listing  # only the runs asked for
        links = set()
        for path in pages:
            text = path.read_text(encoding="utf-8")
            assert "<script>" not in text, path
            if path.name != "fragment.html":  # a drawer, put into a page that has it
                assert '<meta http-equiv="Content-Security-Policy" content="default-src' in text
                policy = html.unescape(text.split('http-equiv="Content-Security-Policy"')[1][:300])
                assert "script-src 'self';" in policy and "frame-ancestors" not in policy
            links |= set(re.findall(r'href="(/[^"#]*)', text))
        assert f"/attempts/{filled.payload_attempt}/" in links
        assert f"/runs/{filled.baseline}/report.json" in links
        assert not [link for link in links if link.startswith(("/benchmarks", "/api/", "/queue"))]
        for link in sorted(links):
            assert client.get(link, follow_redirects=True).status_code == 200, link
        drawer = client.get(f"/attempts/{filled.payload_attempt}/fragment.html").text
        assert "&lt;script&gt;" in drawer and "<html" not in drawer
        answer = client.get(f"/attempts/{filled.payload_attempt}/answer").text
        assert answer.startswith("the answer is <script>")
        run_page = client.get(f"/runs/{filled.candidate}/").text
        assert 'class="filters"' not in run_page and "static copy" in run_page
        assert '<span class="unlinked" title="not in this static copy">webbench</span>' in run_page
        report = client.get(f"/runs/{filled.candidate}/report.json").text
        built = build_report(store, store.get_run(filled.candidate)).model_dump(mode="json")
        assert report == strict_json(built)  # as `report --format json` writes it


def test_a_running_run_or_a_used_directory_is_refused(
    cli: Cli, filled: Filled, tmp_path: Path
) -> None:
    running = cli("view-bundle", filled.queued, "-o", str(tmp_path / "b1"))
    assert (
        running.exit_code != 0 and "still" in running.output and "Traceback" not in running.output
    )
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("mine")
    refused = cli("view-bundle", filled.baseline, "-o", str(used))
    assert refused.exit_code != 0 and "not an empty directory" in refused.output
    assert (used / "keep.txt").read_text() == "mine"


def test_the_command_writes_it_and_says_how_to_serve_it(
    cli: Cli, filled: Filled, tmp_path: Path
) -> None:
    out = tmp_path / "shared"
    done = cli("view-bundle", filled.baseline[:8], "-o", str(out))
    assert done.exit_code == 0, done.output
    assert "python -m http.server" in done.output
    assert (out / "runs" / filled.baseline / "index.html").is_file()
    assert not (out / "compare").exists()  # one run: nothing to compare


def test_a_bundle_holds_every_page_of_a_comparison(store: Store, tmp_path: Path) -> None:
    """A comparison with more changed rows than a page shows: its pages are copied, and the page
    links of each lead to the others, the last one holding the last row."""
    baseline, candidate = fill_paged(store)
    out = tmp_path / "bundle"
    write_bundle(store, [baseline, candidate], out, ())
    first = (out / "compare" / "index.html").read_text(encoding="utf-8")
    assert f"rows 1\u2013100 of {CHANGED}" in first
    assert 'href="/compare/page-3/"' in first and 'href="/compare/page-2/"' in first
    last = (out / "compare" / "page-3" / "index.html").read_text(encoding="utf-8")
    assert f"rows 201\u2013{CHANGED} of {CHANGED}" in last and "p-179" in last
    assert 'href="/compare/"' in last  # back to the first page
    assert len(list((out / "compare" / "side").iterdir())) == CHANGED  # every changed row's


def test_a_reruns_bundle_holds_its_merged_report_and_no_merged_view(
    store: Store, filled: Filled, tmp_path: Path
) -> None:
    """A rerun's merged figures need the server (not copied); its merged report is a file."""
    rerun = rerun_of_the_baseline(store, filled)
    out = tmp_path / "bundle"
    write_bundle(store, [rerun], out, ())
    page = (out / "runs" / rerun / "index.html").read_text(encoding="utf-8")
    assert f'href="/runs/{rerun}/report-merged.json"' in page
    assert 'title="not in this static copy">merged view</span>' in page
    merged = build_report(store, store.get_run(rerun), merged=True).model_dump(mode="json")
    assert (out / "runs" / rerun / "report-merged.json").read_text() == strict_json(merged)
