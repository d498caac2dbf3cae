"""Agent text that would display as something else (docs/security.md, "The web UI"): a
right-to-left override or isolate in a scenario id, an agent name, a cause or a check's reason is
shown as its code point, ANSI escapes become spans of fixed classes (their text escaped), and a
search is words, never the store's query syntax."""

from __future__ import annotations

from pathlib import Path

from benchyard.store.store import Store
from tests.integration.web.hostile import HOSTILE_RUN, RLO, SPOOFED_ID, add_hostile_run
from tests.integration.web.support import fill_store, served


def test_invisible_characters_and_escapes_never_reach_a_page(store: Store, tmp_path: Path) -> None:
    filled = fill_store(store, tmp_path / "project" / "webbench")
    spoofed, *_ = add_hostile_run(store, filled)
    with served(store, tmp_path / "project") as server:
        pages = {
            "runs": server.get("/runs").text,
            "run": server.get(f"/runs/{HOSTILE_RUN}").text,
            "drawer": server.get(f"/runs/{HOSTILE_RUN}?attempt={spoofed}").text,
            "attempt": server.get(f"/attempts/{spoofed}").text,
            "search": server.get(f"/runs/{HOSTILE_RUN}", params={"q": "total"}).text,
            "side": server.get(
                "/compare/side",
                params={"runs": f"{HOSTILE_RUN},{filled.candidate}", "scenario": SPOOFED_ID},
            ).text,
        }
    for name, html in pages.items():
        assert RLO not in html and "\u2066" not in html and "\x1b" not in html, name
        assert "[U+202E]" in html, name
    for name in ("drawer", "side"):
        assert '<span class="ansi-red ansi-bold">FAILED &lt;script&gt;' in pages[name], name
    drawer = pages["drawer"]
    assert '<span class="ansi-red ansi-bold">FAILED &lt;script&gt;' in drawer
    assert '<span class="ansi-green">green</span>' in drawer
    assert "title" not in drawer.split("then", 1)[1].split("</pre>", 1)[0]  # an OSC: dropped
    assert "and [U+001B]" in drawer  # an escape alone, shown
    assert "<script>window" not in drawer
    assert "invoice-[U+202E]fdp.exe" in pages["search"]  # found by its cause


def test_a_search_is_words_never_syntax(store: Store, tmp_path: Path) -> None:
    filled = fill_store(store, tmp_path / "project" / "webbench")
    add_hostile_run(store, filled)
    with served(store, tmp_path / "project") as server:
        for query in ('") OR 1=1 --', "body : *", "x' UNION SELECT", "a:* | !b <-> c"):
            answer = server.get(f"/runs/{HOSTILE_RUN}", params={"q": query})
            assert answer.status_code == 200, (query, answer.text[:300])
            assert "no attempt matches" in answer.text, query
        refused = server.get(f"/runs/{HOSTILE_RUN}", params={"q": '"" *'})
    assert refused.status_code == 400 and "has no word to look for" in refused.text
