"""`benchyard report` reads a SQLite store at the head revision through the standard library's
sqlite3 (issue 27, item 3): its queries are SQL text (store/figures.py, store/report_rows.py,
store/outcomes.py, store/run_reads.py) that sqlite3 and SQLAlchemy both run, and both read the
same report, history and outcomes from one store."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import insert

from benchyard.report.build import counted_report, streamed_report
from benchyard.report.history import benchmark_history
from benchyard.report.listing import write_streamed_json
from benchyard.store import run_reads
from benchyard.store.lite import SqliteReader, open_at_head
from benchyard.store.outcomes import final_failures, final_outcomes
from benchyard.store.schema import run_resumes
from benchyard.store.store import RunNotFound, Store
from tests.integration.runner.test_imports import imported_by
from tests.integration.web.test_figures import _attempts
from tests.support import run_record

RUN = "f1f1f1f1f1f1f1f1"  # the run test_figures.py's attempts are of
EARLIER = "e0e0e0e0e0e0e0e0"
RESUMED_AT = datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=UTC)


@pytest.fixture
def url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


@pytest.fixture
def store(url: str) -> Iterator[Store]:
    """A SQLite store with an earlier run and a run of three epochs of attempts that vary every
    way a report counts, resumed once."""
    store = Store.open(url)
    store.create_run(run_record(EARLIER, started_at=datetime(2026, 1, 1, tzinfo=UTC)))
    store.create_run(run_record(RUN, planned_attempts=90, settings={"epochs": 3}))
    store.record_attempts(_attempts())
    with store.engine.begin() as connection:
        connection.execute(
            insert(run_resumes).values(
                run_id=RUN,
                at=RESUMED_AT,
                action="requeued",
                lost_worker="w1",
                cause="its lease expired",
                by_worker="w2",
                kept=3,
                requeued=2,
            )
        )
    yield store
    store.close()


@pytest.fixture
def lite(store: Store, url: str) -> Iterator[SqliteReader]:
    reader = open_at_head(url)
    assert reader is not None
    yield reader
    reader.close()


def test_sqlite3_reads_the_report_sqlalchemy_reads(store: Store, lite: SqliteReader) -> None:
    run = store.get_run(RUN)

    read, counted = counted_report(lite, run), counted_report(store.reader, run)

    assert read is not None and counted is not None
    assert read.whole() == counted.whole()
    assert read.whole().run.resumes[0].at == RESUMED_AT
    assert len(read.whole().failures) > 30 and len(read.whole().flags) > 5
    assert _json(read.document()) == _json(streamed_report(store, run).document())


def _json(document: object) -> str:
    text = io.StringIO()
    write_streamed_json(document, text)
    return text.getvalue()


def test_sqlite3_reads_the_history_and_outcomes_sqlalchemy_reads(
    store: Store, lite: SqliteReader
) -> None:
    name = store.get_run(RUN).benchmark_name

    assert benchmark_history(lite, name) == benchmark_history(store, name)
    assert len(benchmark_history(lite, name)) == 2
    assert final_outcomes(lite, [EARLIER, RUN]) == final_outcomes(store, [EARLIER, RUN])
    assert list(final_failures(lite, RUN, 5)) == list(final_failures(store, RUN, 5))


def test_a_reference_names_the_run_it_names_in_the_store(store: Store, lite: SqliteReader) -> None:
    for reference in ("latest", "latest~1", "f1f", RUN):
        assert run_reads.resolve_run(lite, reference) == store.resolve_run(reference)
    for reference in ("latest~2", "abc", "LATEST", ""):
        with pytest.raises(RunNotFound) as expected:
            store.resolve_run(reference)
        with pytest.raises(run_reads.RunNotFound, match=re.escape(str(expected.value))):
            run_reads.resolve_run(lite, reference)


def test_report_reads_a_sqlite_store_without_sqlalchemy(
    store: Store, url: str, tmp_path: Path
) -> None:
    """The table and the JSON report, the latter byte for byte the one the Store's reads."""
    written = tmp_path / "report.json"
    for args in (["report", "latest"], ["report", "f1f", "--format", "json", "-o", str(written)]):
        modules = imported_by([*args, "--db", url], tmp_path)

        assert "benchyard.store.figures" in modules
        assert sorted(m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic")) == []
    assert written.read_text(encoding="utf-8") == _json(
        streamed_report(store, store.get_run(RUN)).document()
    )
    assert json.loads(written.read_text(encoding="utf-8"))["run"]["resumes"]


def test_history_reads_a_sqlite_store_without_sqlalchemy(
    store: Store, url: str, tmp_path: Path
) -> None:
    name = store.get_run(RUN).benchmark_name
    for args in (["history", name], ["history", name, "--format", "json"]):
        modules = imported_by([*args, "--db", url], tmp_path)

        assert "benchyard.report.history" in modules
        assert sorted(m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic")) == []


def test_a_merged_report_reads_the_store_through_sqlite3(
    store: Store, url: str, tmp_path: Path
) -> None:
    """What report/build.py folds attempt by attempt (here a merged report) reads the Store's
    attempts, which it reads through sqlite3 too."""
    modules = imported_by(["report", "latest", "--merged", "--db", url], tmp_path)

    assert "benchyard.store.store" in modules
    assert sorted(m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic")) == []


def test_the_audit_artefact_reads_a_sqlite_store_without_sqlalchemy(
    store: Store, url: str, tmp_path: Path
) -> None:
    """`report --format audit`, the last of the report's formats to import SQLAlchemy (for the
    store's URL as printed), writes the artefact that the Store's reads build, but its time."""
    from benchyard.audit.build import build_audit

    written = tmp_path / "audit.json"
    modules = imported_by(
        ["report", RUN, "--format", "audit", "-o", str(written), "--db", url], tmp_path
    )

    assert "benchyard.audit.build" in modules
    assert sorted(m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic")) == []
    through_sqlalchemy = json.loads(build_audit(store, store.get_run(RUN)).model_dump_json())
    audit = json.loads(written.read_text(encoding="utf-8"))
    assert audit["trajectories"]["store"] == url
    for artefact in (audit, through_sqlalchemy):
        artefact.pop("generated_at")
    assert audit == through_sqlalchemy
