"""One run read through a `Reader` (store/lite.py), as SQL text either driver runs: the run a
reference names, and its resumes; what `benchyard report` needs before the run's figures."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from benchyard.errors import BenchyardError
from benchyard.store.lite import Reader
from benchyard.store.records import ResumeRecord, RunRecord
from benchyard.store.run_list import RUN_COLUMNS, moment, run_from_values

LATEST = re.compile(r"^latest(?:~(\d+))?$")
_RUN_ID_PREFIX = re.compile(r"[0-9a-f]{1,32}")


class RunNotFound(BenchyardError):
    """A run reference that matches no run, or more than one."""


def resolve_run(reader: Reader, reference: str) -> RunRecord:
    """A run id, a unique id prefix, `latest` or `latest~N`."""
    columns = ", ".join(RUN_COLUMNS)
    latest = LATEST.match(reference)
    if latest:
        rows = reader.rows(
            f"SELECT {columns} FROM runs ORDER BY started_at DESC, id DESC LIMIT 1 OFFSET :back",
            {"back": int(latest.group(1) or 0)},
        )
        if not rows:
            count = reader.rows("SELECT count(*) FROM runs", {})[0][0]
            raise RunNotFound(f"'{reference}': the store holds {count} run(s)")
        return run_from_values(rows[0])
    if not _RUN_ID_PREFIX.fullmatch(reference):
        raise RunNotFound(f"'{reference}' is not a run id, id prefix, 'latest' or 'latest~N'")
    rows = reader.rows(
        f"SELECT {columns} FROM runs WHERE id LIKE :prefix LIMIT 2", {"prefix": reference + "%"}
    )
    if not rows:
        raise RunNotFound(f"no run matches '{reference}' (see `benchyard runs`)")
    if len(rows) > 1:
        raise RunNotFound(f"'{reference}' matches several runs; give more characters of the id")
    return run_from_values(rows[0])


_RESUME_COLUMNS = (
    "run_id",
    "at",
    "action",
    "lost_worker",
    "cause",
    "by_worker",
    "kept",
    "requeued",
)


def run_resumes(reader: Reader, run_id: str) -> list[ResumeRecord]:
    """The times a crashed worker's claims on the run were taken back, oldest first."""
    sql = f"SELECT {', '.join(_RESUME_COLUMNS)} FROM run_resumes WHERE run_id = :run ORDER BY id"
    return [_resume(row) for row in reader.rows(sql, {"run": run_id})]


def _resume(row: Sequence[Any]) -> ResumeRecord:
    values = dict(zip(_RESUME_COLUMNS, row, strict=True))
    values["at"] = moment(values["at"])
    return ResumeRecord(**values)
