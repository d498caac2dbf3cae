"""What a finished run's exit status says to CI (docs/exit-codes.md): whether anything could be
graded at all, and whether accuracy (or the lower bound of its 95% Wilson interval) reached the
`--fail-under` rate."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # kept light: the CLI imports GateOn when it starts
    from benchyard.report.model import Summary

EXIT_BELOW_THRESHOLD = 1
EXIT_NOTHING_GRADED = 3


class GateOn(StrEnum):
    accuracy = "accuracy"
    lower_bound = "lower-bound"  # of accuracy's 95% Wilson interval


@dataclass(frozen=True)
class GateFailure:
    exit_code: int
    message: str


def nothing_graded(summary: Summary) -> GateFailure | None:
    """Every final attempt errored or timed out: the agent or the machine is broken, whatever
    the threshold."""
    if summary.attempt_count and summary.passed + summary.failed == 0:
        return GateFailure(
            EXIT_NOTHING_GRADED,
            f"no attempt was graded: all {summary.attempt_count} final attempts ended in "
            f"{_kinds(summary)}",
        )
    return None


def below_threshold(summary: Summary, fail_under: float, on: GateOn) -> GateFailure | None:
    """Accuracy (or its interval's lower bound) under `fail_under`; a run with nothing counted
    has no accuracy and is under any threshold."""
    from benchyard.report.render import percent

    if on is GateOn.lower_bound:
        value = summary.accuracy_ci95[0] if summary.accuracy_ci95 is not None else None
        what = "the lower bound of accuracy's 95% interval"
    else:
        value, what = summary.accuracy, "accuracy"
    if value is not None and value >= fail_under:
        return None
    return GateFailure(
        EXIT_BELOW_THRESHOLD,
        f"{what} {percent(value)} is under --fail-under {percent(fail_under)} "
        f"({summary.passed}/{summary.counted} counted)",
    )


def run_gate(summary: Summary, fail_under: float | None, on: GateOn) -> GateFailure | None:
    """The first gate the run fails, if any: nothing graded, then the threshold."""
    failure = nothing_graded(summary)
    if failure is None and fail_under is not None:
        failure = below_threshold(summary, fail_under, on)
    return failure


def _kinds(summary: Summary) -> str:
    parts = [
        f"{count} {word}{'' if count == 1 else 's'}"
        for count, word in ((summary.errors, "error"), (summary.timeouts, "timeout"))
        if count
    ]
    return " and ".join(parts)
