"""Speed runs in the store: a `runs` row of kind `speed` and its samples in `speed_samples`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import func, insert, select, update

from benchyard.speed.models import Sample
from benchyard.store.schema import runs, speed_samples
from benchyard.store.store import Store

SPEED_KIND = "speed"
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


def sample_counts(
    store: Store, run_ids: Sequence[str], with_warmup: bool = False
) -> dict[str, int]:
    """Measured calls (warm-ups left out unless asked for) of each speed run, in one query."""
    if not run_ids:
        return {}
    query = select(speed_samples.c.run_id, func.count()).where(
        speed_samples.c.run_id.in_(list(run_ids))
    )
    if not with_warmup:
        query = query.where(speed_samples.c.phase != "warmup")
    query = query.group_by(speed_samples.c.run_id)
    with store.engine.connect() as connection:
        return {run_id: int(count) for run_id, count in connection.execute(query)}


def end_run(store: Store, run_id: str, status: str, reason: str | None = None) -> None:
    with store.engine.begin() as connection:
        connection.execute(
            update(runs)
            .where(runs.c.id == run_id)
            .values(status=status, finished_at=datetime.now(UTC), status_reason=reason)
        )
