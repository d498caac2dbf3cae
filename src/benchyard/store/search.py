"""Full-text search over a run's final attempts: scenario ids, answers, causes and check reasons.

One query language on both stores: words (every one must appear), `"quoted phrases"` (the words
next to each other, in that order) and `word*` (words starting so). A term with punctuation in it
(`math-001`) is the phrase of its words. Text is split into words here, in Python, the same way for
the index and the query (letters and digits, lower-cased), so that SQLite's FTS5 and PostgreSQL's
text search (the `simple` configuration, no stemming) see the same words and find the same
attempts.

The index (`search_attempts`, migration 0017) is filled per run on its first search; a run that
has not ended is indexed again at each search (a retry replaces a try without changing the count),
and one that ended, once more if its count of final attempts differs from the one indexed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import (
    Column,
    Connection,
    Integer,
    MetaData,
    Select,
    String,
    Table,
    Text,
    delete,
    func,
    insert,
    literal_column,
    select,
    text,
)

from benchyard.errors import BenchyardError
from benchyard.store import outputs as outputs_codec
from benchyard.store.queue import ACTIVE_RUN_STATUSES
from benchyard.store.schema import attempts, check_results, runs
from benchyard.store.store import Store

MAX_WORD = 100  # longer words are cut (PostgreSQL refuses words over 2,047 bytes)
MAX_TERMS = 32
BATCH = 500
UNSETTLED = -1  # search_runs.attempts of a run indexed before it ended: indexed again

_WORD = re.compile(r"[^\W_]+")
_TERM = re.compile(r'"([^"]*)"|(\S+)')

# The index's tables: built by migration 0017, each store its own way (an FTS5 table in SQLite, a
# tsvector with a GIN index in PostgreSQL); described here only to be queried.
_index = MetaData()
search_attempts = Table(
    "search_attempts",
    _index,
    Column("attempt_id", String(32)),
    Column("run_id", String(32)),
    Column("body", Text),
)
search_runs = Table(
    "search_runs",
    _index,
    Column("run_id", String(32), primary_key=True),
    Column("attempts", Integer, nullable=False),
)


class SearchError(BenchyardError):
    """A search that looks for nothing."""


@dataclass(frozen=True)
class Term:
    words: tuple[str, ...]  # one word, or a phrase
    prefix: bool = False  # the last word is a prefix


def words(textual: str) -> list[str]:
    """The words of a text as the index holds them."""
    return [word[:MAX_WORD] for word in _WORD.findall(textual.lower())]


def parse(query: str) -> list[Term]:
    """The terms of a search; refused when it has no word at all."""
    terms = []
    for phrase, bare in _TERM.findall(query):
        raw = phrase if phrase else bare
        found = words(raw)
        if found:
            terms.append(Term(tuple(found), prefix=not phrase and raw.endswith("*")))
    if not terms:
        raise SearchError(f"search: '{query}' has no word to look for (letters or digits)")
    return terms[:MAX_TERMS]


def fts5_query(run_id: str, terms: list[Term]) -> str:
    """The FTS5 MATCH expression: the run's id in its column, and every term in the body."""
    parts = [f'"{" ".join(t.words)}"' + ("*" if t.prefix else "") for t in terms]
    return f'run_id : "{" ".join(words(run_id))}" AND body : ({" AND ".join(parts)})'


def tsquery(terms: list[Term]) -> str:
    """The PostgreSQL to_tsquery expression (`simple` configuration) of the same terms."""
    parts = []
    for term in terms:
        spelled = [*term.words[:-1], term.words[-1] + (":*" if term.prefix else "")]
        parts.append("(" + " <-> ".join(spelled) + ")")
    return " & ".join(parts)


def matching(dialect: str, run_id: str, query: str) -> Select[tuple[str]]:
    """The ids of the run's attempts that match `query` (a subquery for an IN condition)."""
    terms = parse(query)
    if dialect == "postgresql":
        condition = search_attempts.c.body.op("@@")(func.to_tsquery("simple", tsquery(terms)))
        return select(search_attempts.c.attempt_id).where(
            search_attempts.c.run_id == run_id, condition
        )
    return select(search_attempts.c.attempt_id).where(
        literal_column("search_attempts").op("MATCH")(fts5_query(run_id, terms))
    )


# ---- the index ----------------------------------------------------------------------------------


def ensure_indexed(store: Store, run_id: str) -> None:
    """Index the run's final attempts unless the index holds them already: those of a run that
    ended, as many as it has now."""
    with store.engine.begin() as connection:
        status = connection.execute(select(runs.c.status).where(runs.c.id == run_id)).scalar()
        final = _final_count(connection, run_id)
        indexed = connection.execute(
            select(search_runs.c.attempts).where(search_runs.c.run_id == run_id)
        ).scalar()
        ended = status not in ACTIVE_RUN_STATUSES
        if ended and indexed == final:
            return
        _index_run(connection, run_id)
        connection.execute(delete(search_runs).where(search_runs.c.run_id == run_id))
        recorded = final if ended else UNSETTLED
        connection.execute(insert(search_runs).values(run_id=run_id, attempts=recorded))


def _final_count(connection: Connection, run_id: str) -> int:
    query = (
        select(func.count())
        .select_from(attempts)
        .where(attempts.c.run_id == run_id, attempts.c.superseded.is_(False))
    )
    return int(connection.execute(query).scalar_one())


def _index_run(connection: Connection, run_id: str) -> None:
    postgres = connection.dialect.name == "postgresql"
    connection.execute(delete(search_attempts).where(search_attempts.c.run_id == run_id))
    reasons = _reasons(connection, run_id)
    rows = connection.execute(
        select(
            attempts.c.id,
            attempts.c.scenario_id,
            attempts.c.cause,
            attempts.c.answer,
            attempts.c.outputs,
        ).where(attempts.c.run_id == run_id, attempts.c.superseded.is_(False))
    )
    statement = (
        text(
            "INSERT INTO search_attempts (attempt_id, run_id, body) "
            "VALUES (:attempt_id, :run_id, to_tsvector('simple', :body))"
        )
        if postgres
        else insert(search_attempts)
    )
    batch: list[dict[str, str]] = []
    for row in rows:
        answer = outputs_codec.decode(row.outputs).answer if row.outputs else row.answer
        body = [row.scenario_id, row.cause or "", answer or "", *reasons.get(row.id, [])]
        batch.append(
            {
                "attempt_id": row.id,
                "run_id": run_id,
                "body": " ".join(words(" ".join(body))),
            }
        )
        if len(batch) >= BATCH:
            connection.execute(statement, batch)
            batch = []
    if batch:
        connection.execute(statement, batch)


def _reasons(connection: Connection, run_id: str) -> dict[str, list[str]]:
    query = (
        select(check_results.c.attempt_id, check_results.c.label, check_results.c.reason)
        .join(attempts, attempts.c.id == check_results.c.attempt_id)
        .where(attempts.c.run_id == run_id, attempts.c.superseded.is_(False))
    )
    found: dict[str, list[str]] = {}
    for row in connection.execute(query):
        found.setdefault(row.attempt_id, []).extend((row.label, row.reason))
    return found
