"""`benchyard view-bundle`: a static, read-only copy of the web UI's pages for some runs, that
opens from any plain file server (`python -m http.server`), as `inspect view bundle` does.

Every page is the server's own page, rendered by the same application (read-only, the same
templates and escaping) and asked for in process; a static copy differs only in what a file server
cannot do. A page's address becomes a directory (`/runs/RUN/`, `/attempts/ID/`) and each link
is rewritten to the file that holds it: the attempts table's pages (`page-N/`), an attempt (its
own page, and `fragment.html` for the drawer), its artifacts as files, the comparison of the runs
and each scenario of it side by side, each run's report as `benchyard report --format json` writes
it (`report.json`). A file server sends no headers, so the pages carry the Content-Security-Policy
in a meta element (all but frame-ancestors, which only a header can give). Filters, sorting and
search need a server: a static copy shows none of them, and a link to a page it does not hold (a
benchmark, the queue, a page's JSON) is written as its text alone, so that no link leads nowhere."""

from __future__ import annotations

import hashlib
import html
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from starlette.testclient import TestClient

from benchyard.errors import BenchyardError
from benchyard.store.browse import final_attempt_id
from benchyard.store.records import RunRecord
from benchyard.store.store import Store
from benchyard.web.app import STATIC, create_app
from benchyard.web.config import WebConfig
from benchyard.web.routes.attempts import ARTIFACTS
from benchyard.web.rows import ACTIVE
from benchyard.web.tokens import new_token, token_hash

PER_PAGE = 500
_HREF = re.compile(r'href="([^"]*)"')
_LOCAL_LINK = re.compile(r'<a\b[^>]*?\bhref="(/[^"#]*)[^"]*"[^>]*>(.*?)</a>', re.DOTALL)


class BundleError(BenchyardError):
    """A bundle that cannot be written (a run still running, a directory already in use)."""


@dataclass
class Bundle:
    """What was written."""

    directory: Path
    run_ids: list[str]
    pages: int = 0
    files: int = 0
    side_keys: dict[tuple[str, int], str] = field(default_factory=dict)


def write_bundle(
    store: Store, run_refs: Sequence[str], directory: Path, benchmark_dirs: tuple[Path, ...] = ()
) -> Bundle:
    """Write the pages of the runs `run_refs` (ids, prefixes, `latest`) under `directory`."""
    runs = [store.resolve_run(ref) for ref in run_refs]
    _check(runs, directory)
    token = new_token()
    config = WebConfig(
        store_url=store.url,
        read_only=True,
        token_sha256=token_hash(token),
        benchmark_dirs=benchmark_dirs,
        static_copy=True,
        static_compare=len(runs) >= 2,
    )
    app = create_app(config, store=store)
    bundle = Bundle(directory=directory, run_ids=[run.id for run in runs])
    headers = {"authorization": f"Bearer {token}"}
    with TestClient(app, base_url="http://127.0.0.1", headers=headers) as client:
        _Writer(client, store, bundle).write_all(runs)
    shutil.copytree(STATIC, directory / "static", dirs_exist_ok=True)
    _unlink_missing(directory)
    return bundle


def _check(runs: list[RunRecord], directory: Path) -> None:
    active = [run.id[:8] for run in runs if run.status in ACTIVE]
    if active:
        raise BundleError(f"run {active[0]} is still {runs[0].status}: bundle it once it ends")
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise BundleError(f"{directory}: exists and is not an empty directory; name a new one")


def _unlink_missing(directory: Path) -> None:
    """Write each link of the copy's pages to a page it does not hold as its text alone."""

    def held(match: re.Match[str]) -> str:
        place = directory / match.group(1).lstrip("/")
        if (place / "index.html").is_file() if match.group(1).endswith("/") else place.is_file():
            return match.group(0)
        return f'<span class="unlinked" title="not in this static copy">{match.group(2)}</span>'

    for path in directory.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        kept = _LOCAL_LINK.sub(held, text)
        if kept != text:
            path.write_text(kept, encoding="utf-8")


class _Writer:
    def __init__(self, client: TestClient, store: Store, bundle: Bundle) -> None:
        self.client = client
        self.store = store
        self.bundle = bundle

    def write_all(self, runs: list[RunRecord]) -> None:
        listing = "/runs?" + urlencode([("run", run.id) for run in runs] + [("per_page", PER_PAGE)])
        for target in ("index.html", "runs/index.html"):
            self.page(listing, target)
        if len(runs) >= 2:
            self.comparison(runs)
        for run in runs:
            self.run(run)

    def run(self, run: RunRecord) -> None:
        table = self.client.get(f"/api/runs/{run.id}", params={"per_page": PER_PAGE}).json()
        for number in range(1, table["attempts"]["paging"]["pages"] + 1):
            place = "" if number == 1 else f"page-{number}/"
            self.page(
                f"/runs/{run.id}?per_page={PER_PAGE}&page={number}",
                f"runs/{run.id}/{place}index.html",
            )
        self.report(run.id, "report.json")
        if run.parent_run_id:
            self.report(run.id, "report-merged.json", merged=True)
        for attempt in self.store.attempts(run.id, include_superseded=True):
            self.attempt(attempt.id)

    def report(self, run_id: str, name: str, merged: bool = False) -> None:
        """The run's report as `benchyard report --format json` (`--merged`) writes it."""
        params = {"merged": "true"} if merged else {}
        answer = self.client.get(f"/api/runs/{run_id}/report", params=params)
        if answer.status_code != 200:
            raise BundleError(f"the report of {run_id[:8]} answered {answer.status_code}")
        self.write(f"runs/{run_id}/{name}", answer.content)

    def attempt(self, attempt_id: str) -> None:
        self.page(f"/attempts/{attempt_id}", f"attempts/{attempt_id}/index.html")
        self.page(f"/attempts/{attempt_id}?fragment=1", f"attempts/{attempt_id}/fragment.html")
        for name in ARTIFACTS:
            answer = self.client.get(f"/attempts/{attempt_id}/{name}")
            self.write(f"attempts/{attempt_id}/{name}", answer.content)

    def comparison(self, runs: list[RunRecord]) -> None:
        query = urlencode([("run", run.id) for run in runs] + [("allow_mismatch", "true")])
        paging = self.client.get(f"/api/compare?{query}").json()["paging"]
        for number in range(1, (paging["pages"] if paging else 1) + 1):
            place = "" if number == 1 else f"page-{number}/"
            self.page(f"/compare?{query}&page={number}", f"compare/{place}index.html")
        if len(runs) > 3:
            return
        names = ",".join(run.id for run in runs)
        for row in self.grid_rows(query):
            key = self.side_key(row["scenario_id"], row["epoch"])
            side = urlencode({"runs": names, "scenario": row["scenario_id"], "epoch": row["epoch"]})
            self.page(f"/compare/side?{side}", f"compare/side/{key}/index.html")

    def grid_rows(self, query: str) -> Iterator[dict[str, Any]]:
        """Every row of the comparison's grid that differs, over all its pages."""
        number, pages = 1, 1
        while number <= pages:
            shown = self.client.get(f"/api/compare?{query}&page={number}&per_page=1000").json()
            yield from shown["grid"]
            pages = shown["paging"]["pages"]
            number += 1

    def side_key(self, scenario_id: str, epoch: int) -> str:
        digest = hashlib.sha256(f"{scenario_id}\0{epoch}".encode()).hexdigest()[:16]
        return self.bundle.side_keys.setdefault((scenario_id, epoch), digest)

    def page(self, address: str, target: str) -> None:
        answer = self.client.get(address, headers={"accept": "text/html"})
        if answer.status_code != 200:
            raise BundleError(f"{address}: the page answered {answer.status_code}")
        here = urlsplit(address).path
        text = _HREF.sub(
            lambda m: f'href="{html.escape(self.local(m.group(1), here))}"', answer.text
        )
        self.write(target, text.encode("utf-8"))
        self.bundle.pages += 1

    def write(self, target: str, content: bytes) -> None:
        path = self.bundle.directory / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        self.bundle.files += 1

    def local(self, href: str, here: str) -> str:
        """Where the page a link names lies in the bundle (links to pages it does not hold are
        left as they are)."""
        parts = urlsplit(html.unescape(href))
        if parts.scheme or parts.netloc:
            return href
        path = parts.path or here
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        fragment = f"#{parts.fragment}" if parts.fragment else ""
        return self._path(path, query) + fragment

    def _path(self, path: str, query: dict[str, str]) -> str:
        if path.startswith("/api/runs/") and path.endswith("/report"):
            name = "report-merged.json" if query.get("merged") == "true" else "report.json"
            return f"{path.removeprefix('/api')[: -len('report')]}{name}"
        if path.startswith("/runs/") and path.count("/") == 2 and query.get("merged"):
            return path  # the merged view needs the server: not held
        if path.startswith("/runs/") and path.count("/") == 2:
            if query.get("attempt"):
                return f"/attempts/{query['attempt']}/"
            number = int(query.get("page", "1") or 1)
            return f"{path}/" if number <= 1 else f"{path}/page-{number}/"
        if path == "/compare/side":
            key = (query.get("scenario", ""), int(query.get("epoch", "1")))
            return f"/compare/side/{self.side_key(*key)}/"
        if path == "/compare/attempt":
            found = final_attempt_id(
                self.store, query["run"], query["scenario"], int(query.get("epoch", "1"))
            )
            return f"/attempts/{found}/" if found else "/compare/"
        if path.startswith("/attempts/") and path.count("/") == 2:
            return f"{path}/"
        if path == "/compare" and int(query.get("page", "1") or 1) > 1:
            return f"/compare/page-{int(query['page'])}/"
        if path in ("/runs", "/compare", "/"):
            return f"{path.rstrip('/')}/"
        return path
