"""The Alembic migrations build exactly the tables the code uses, on SQLite and PostgreSQL."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from benchyard.store.engine import head_revision, head_revisions
from benchyard.store.schema import metadata
from benchyard.store.store import Store


def test_migrated_schema_matches_the_tables_in_code(store: Store) -> None:
    with store.engine.connect() as connection:
        # the search index (store/search.py) is each store's own: FTS5 in SQLite, a tsvector in
        # PostgreSQL; it is not among the tables in code
        context = MigrationContext.configure(connection, opts={"include_name": _not_search})
        differences = compare_metadata(context, metadata)
        versions = connection.execute(text("SELECT version_num FROM alembic_version")).scalars()
        at = frozenset(str(version) for version in versions)
    assert differences == []
    # every head: one once the chain is linear, several while migrations written side by side
    # branch from one revision (store/engine.py, head_revisions)
    assert at == head_revisions() and head_revision() in at


def _not_search(name: str | None, kind: str, _parents: object) -> bool:
    return not (kind == "table" and (name or "").startswith("search_"))


def test_opening_an_up_to_date_store_again_keeps_its_runs(store: Store, db_url: str) -> None:
    from tests.unit.report.test_report_figures import _run

    run = _run(store)
    again = Store.open(db_url)
    assert again.get_run(run.id).benchmark_name == "hand"
    assert len(again.attempts(run.id)) == 12
    again.close()
