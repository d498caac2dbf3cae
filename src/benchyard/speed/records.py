"""Speed runs in the store: a `runs` row of kind `speed` and its samples in `speed_samples`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import insert, select, update

from benchyard.speed.models import Sample
from benchyard.store.run_list import SPEED_KIND as SPEED_KIND
from benchyard.store.schema import runs, speed_samples
from benchyard.store.store import Store

_SAMPLE_COLUMNS = tuple(column.name for column in speed_samples.columns if column.name != "run_id")


def record_samples(store: Store, run_id: str, samples: Sequence[Sample]) -> None:
    if not samples:
        return
    rows = [
        {"run_id": run_id, **sample.model_dump(include=set(_SAMPLE_COLUMNS))} for sample in samples
    ]
    with store.engine.begin() as connection:
        connection.execute(insert(speed_samples), rows)


def load_samples(store: Store, run_id: str) -> list[Sample]:
    query = (
        select(*(speed_samples.c[name] for name in _SAMPLE_COLUMNS))
        .where(speed_samples.c.run_id == run_id)
        .order_by(speed_samples.c.position)
    )
    with store.engine.connect() as connection:
        return [Sample.model_validate(row._asdict()) for row in connection.execute(query)]


def end_run(store: Store, run_id: str, status: str, reason: str | None = None) -> None:
    with store.engine.begin() as connection:
        connection.execute(
            update(runs)
            .where(runs.c.id == run_id)
            .values(status=status, finished_at=datetime.now(UTC), status_reason=reason)
        )
