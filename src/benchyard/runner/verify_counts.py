"""What `verify` did beyond grading references, in one line: references executed in the sandbox,
answers re-derived by their `derive` programs, haystacks regenerated from their seeds, and decoys
(known-wrong answers) rejected by the checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchyard.runner.api import VerifyOutcome


def counts_line(outcomes: Sequence[VerifyOutcome]) -> str | None:
    """None when nothing was derived, regenerated or rejected (a benchmark without `derive`,
    `haystack` or `decoys`: its output stays as it was)."""
    executed = sum(1 for o in outcomes if o.executed)
    derived = sum(1 for o in outcomes if o.derived)
    haystacks = sum(1 for o in outcomes if o.haystack)
    decoys = sum(o.decoys_rejected for o in outcomes)
    if not (derived or haystacks or decoys):
        return None
    return (
        f"{executed} reference(s) executed in the sandbox, {derived} answer(s) re-derived by "
        f"their derive programs, {haystacks} haystack(s) regenerated from their seeds, "
        f"{decoys} decoy(s) rejected"
    )
