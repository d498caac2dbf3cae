"""Where a run's attempts came from: a rerun of another run (`parent_run_id`), a rescore of one
(`rescored_from`), or a log imported from another tool (`settings.imported_from`). Every listing,
report and comparison names a run's lineage, so that none of them is silently one side of a
comparison or a score (docs/queue-and-compare.md#what-a-run-is-made-of)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchyard.store.records import RunRecord


def lineage(run: RunRecord) -> list[str]:
    """`rerun of 1a2b3c4d`, `rescore of 5e6f7a8b`, `imported from inspect log.eval`: what the run
    was made from, each with the short id of the run (or the file) it came from."""
    return lineage_of(run.parent_run_id, run.rescored_from, run.settings)


def lineage_of(
    parent_run_id: str | None, rescored_from: str | None, settings: Mapping[str, Any]
) -> list[str]:
    parts = []
    if parent_run_id:
        parts.append(f"rerun of {parent_run_id[:8]}")
    if rescored_from:
        parts.append(f"rescore of {rescored_from[:8]}")
    imported = settings.get("imported_from")
    if isinstance(imported, Mapping):
        source = " ".join(
            str(part) for part in (imported.get("format"), imported.get("file")) if part
        )
        parts.append(f"imported from {source or 'another tool'}")
    return parts


def merged_note(chain: Sequence[str]) -> str | None:
    """`merged: 1a2b3c4d + 5e6f7a8b (the rerun's attempts replace its source's)` for a run merged
    with the runs it re-ran; None for a run read alone."""
    if len(chain) < 2:
        return None
    ids = " + ".join(run_id[:8] for run_id in chain)
    return f"merged: {ids} (each rerun's attempts replace those of the run it re-ran)"
