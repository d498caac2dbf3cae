"""Full-text search over a run's attempts (store/search.py), on the suite's store (SQLite's FTS5 or
PostgreSQL's text search): the same query finds the same attempts in scenario ids, answers, causes
and check reasons, only in the run searched, and a run that grows is indexed again."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from benchyard.store.browse import AttemptQuery, attempt_page
from benchyard.store.records import CheckRecord
from benchyard.store.schema import attempts
from benchyard.store.search import SearchError, ensure_indexed, parse
from benchyard.store.store import Store
from tests.support import attempt_record, run_record

RUN, OTHER = "5ea1c0de5ea1c0de", "0the70the70the70"


def _reason(text: str) -> list[CheckRecord]:
    return [CheckRecord(0, "judge", "judge", False, 0.0, 1.0, text)]


@pytest.fixture
def searched(store: Store) -> Store:
    for run_id in (RUN, OTHER):
        store.create_run(run_record(run_id))
    store.record_attempts(
        [
            attempt_record(RUN, "1" * 32, "math-001", answer="The total is 42 apples"),
            attempt_record(RUN, "2" * 32, "math-002", answer="x", cause="Timeout while parsing"),
            attempt_record(
                RUN, "3" * 32, "text-001", answer="y", checks=_reason("réponse hors sujet")
            ),
            attempt_record(RUN, "4" * 32, "text-002", answer="apples and pears, 42 of them"),
            attempt_record(OTHER, "5" * 32, "math-001", answer="42 apples too"),
        ]
    )
    return store


def _found(store: Store, query: str, run_id: str = RUN) -> list[str]:
    ensure_indexed(store, run_id)
    page = attempt_page(store, run_id, AttemptQuery(search=query, limit=50))
    return [row.scenario_id for row in page.rows]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("apples", ["math-001", "text-002"]),  # in answers
        ("APPLES 42", ["math-001", "text-002"]),  # every word, any case
        ('"42 apples"', ["math-001"]),  # a phrase: in this order
        ("math-001", ["math-001"]),  # a scenario id: the phrase of its words
        ("timeout", ["math-002"]),  # in a cause
        ("réponse", ["text-001"]),  # in a check's reason, accents kept
        ("pars*", ["math-002"]),  # a prefix
        ("apples bananas", []),
    ],
)
def test_the_same_query_finds_the_same_attempts(
    searched: Store, query: str, expected: list[str]
) -> None:
    assert _found(searched, query) == expected


def test_only_the_run_searched_is_searched(searched: Store) -> None:
    assert _found(searched, "apples too", OTHER) == ["math-001"]
    assert _found(searched, "too") == []


def test_a_run_that_grows_is_indexed_again(searched: Store) -> None:
    assert _found(searched, "cherries") == []
    searched.record_attempts([attempt_record(RUN, "6" * 32, "text-003", answer="cherries")])
    assert _found(searched, "cherries") == ["text-003"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('apples OR "', []),  # OR is a word to find, the lone quote nothing
        ("body : apples", []),  # no column filter: "body" is a word to find
        ("apples & !(42", ["math-001", "text-002"]),  # tsquery operators are not words
        ("NEAR(apples 42)", []),  # NEAR is a word to find (in "near apples")
    ],
)
def test_search_syntax_cannot_reach_the_query_language(
    searched: Store, query: str, expected: list[str]
) -> None:
    """FTS5 and tsquery operators in a search are words or nothing, never syntax."""
    assert _found(searched, query) == expected


def test_a_search_of_no_word_is_refused() -> None:
    with pytest.raises(SearchError, match="has no word to look for"):
        parse(' "" -- * ')


def test_a_retry_in_a_running_run_is_found_once_indexed_again(store: Store) -> None:
    """A retry replaces a try without changing how many final attempts the run has."""
    store.create_run(run_record(RUN, status="running", finished_at=None))
    store.record_attempts([attempt_record(RUN, "1" * 32, "flaky-001", answer="first words")])
    assert _found(store, "first") == ["flaky-001"]
    with store.engine.begin() as connection:
        connection.execute(
            update(attempts).where(attempts.c.id == "1" * 32).values(superseded=True)
        )
    store.record_attempts(
        [attempt_record(RUN, "2" * 32, "flaky-001", try_number=2, answer="second words")]
    )
    assert _found(store, "second") == ["flaky-001"]
    assert _found(store, "first") == []
