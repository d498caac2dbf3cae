"""Finding things on a run's page (issue 24, item 6): the attempts table searched in full text,
and the drawer's previous and next attempts in the table beside it."""

from __future__ import annotations

from benchyard.store.store import Store
from tests.integration.web.hostile import HOSTILE_RUN, add_hostile_run
from tests.integration.web.support import Filled, ServerThread


def test_the_attempts_table_is_searched_in_answers_causes_and_reasons(
    server: ServerThread, filled: Filled
) -> None:
    by_answer = server.get(f"/api/runs/{filled.candidate}", params={"q": "answer is"}).json()
    assert [r["scenario_id"] for r in by_answer["attempts"]["rows"]] == ["s2"]
    assert by_answer["attempts"]["paging"]["total"] == 1
    by_cause = server.get(f"/api/runs/{filled.candidate}", params={"q": "sandbox start"}).json()
    assert [r["scenario_id"] for r in by_cause["attempts"]["rows"]] == ["s4"]
    by_reason = server.get(f"/api/runs/{filled.baseline}", params={"q": "differs"}).json()
    assert [r["scenario_id"] for r in by_reason["attempts"]["rows"]] == ["s3"]
    page = server.get(f"/runs/{filled.candidate}", params={"q": "sandbox start"}).text
    assert 'name="q" value="sandbox start"' in page


def test_the_drawer_links_the_attempts_before_and_after_it(
    server: ServerThread, filled: Filled, store: Store
) -> None:
    ids = add_hostile_run(store, filled, attempts=4)  # scenarios sort: invoice-…, plain-001…
    middle = server.get(f"/api/runs/{HOSTILE_RUN}", params={"attempt": ids[1]}).json()["drawer"]
    assert (middle["previous_id"], middle["next_id"]) == (ids[0], ids[2])
    first = server.get(f"/api/runs/{HOSTILE_RUN}", params={"attempt": ids[0]}).json()["drawer"]
    assert (first["previous_id"], first["next_id"]) == (None, ids[1])
    html = server.get(f"/runs/{HOSTILE_RUN}", params={"attempt": ids[3]}).text
    assert f'data-drawer="/attempts/{ids[2]}"' in html.split('data-drawer-step="previous"')[1][:400]
    assert '<a data-drawer-step="next" hidden>' in html
