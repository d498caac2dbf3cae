"""What a finished run's exit status says to CI (docs/exit-codes.md): whether anything could be
graded at all, and whether accuracy (or the lower bound of its 95% Wilson interval) reached the
`--fail-under` rate. The gate counts errors as failures unless told to leave them out: an error is
not the agent's fault, but a run that passes its gate on the answers that happened to be graded
could hide the rest."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # kept light: the CLI imports GateOn when it starts
    from benchyard.report.model import RunReport

EXIT_BELOW_THRESHOLD = 1
EXIT_NOTHING_GRADED = 3
NOT_STARTED_KINDS = frozenset({"agent_start", "sandbox_start"})
"""Failure kinds of attempts whose agent never ran: its command could not (126/127), or the
sandbox did not start."""
CAUSE_CHARS = 200


class GateOn(StrEnum):
    accuracy = "accuracy"
    lower_bound = "lower-bound"  # of accuracy's 95% Wilson interval


@dataclass(frozen=True)
class GateFailure:
    exit_code: int
    message: str


class GateCounts(Protocol):
    """What the gates read of a run's final attempts: a report's Summary, or FinalCounts."""

    @property
    def attempt_count(self) -> int: ...
    @property
    def passed(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def timeouts(self) -> int: ...
    @property
    def errors(self) -> int: ...
    @property
    def counted(self) -> int: ...


@dataclass(frozen=True)
class FinalCounts:
    """A run's final attempts by verdict, counted by the database: what its exit status reads
    when no report is printed (`run -q`), without building one."""

    attempt_count: int
    passed: int
    failed: int
    timeouts: int
    errors: int
    unstarted: int = 0
    """Attempts not passed whose failure kind says their agent never ran (NOT_STARTED_KINDS)."""

    @property
    def counted(self) -> int:
        return self.passed + self.failed + self.timeouts

    @property
    def maybe_none_started(self) -> bool:
        """Whether `nothing_started` may hold: then only the report's failures can say (and
        name the first cause); otherwise it cannot."""
        return bool(self.attempt_count) and self.unstarted == self.attempt_count

    @classmethod
    def of(cls, groups: Mapping[tuple[str | None, str | None], int]) -> FinalCounts:
        """From final attempts counted by (verdict, failure kind)."""

        def verdict(name: str) -> int:
            return sum(count for (value, _), count in groups.items() if value == name)

        return cls(
            attempt_count=sum(groups.values()),
            passed=verdict("passed"),
            failed=verdict("failed"),
            timeouts=verdict("timeout"),
            errors=verdict("error"),
            unstarted=sum(
                count
                for (value, kind), count in groups.items()
                if value != "passed" and kind in NOT_STARTED_KINDS
            ),
        )


def nothing_graded(summary: GateCounts) -> GateFailure | None:
    """Every final attempt errored or timed out: the agent or the machine is broken, whatever
    the threshold."""
    if summary.attempt_count and summary.passed + summary.failed == 0:
        return GateFailure(
            EXIT_NOTHING_GRADED,
            f"no attempt was graded: all {summary.attempt_count} final attempts ended in "
            f"{_kinds(summary)}",
        )
    return None


def nothing_started(report: RunReport) -> GateFailure | None:
    """Every final attempt failed to start (a typo in the agent's command, a sandbox that does
    not start): whatever else, the run measured nothing of the agent."""
    total = report.summary.attempt_count
    kinds = [failure.failure_kind for failure in report.failures]
    if not total or len(kinds) != total or not set(kinds) <= NOT_STARTED_KINDS:
        return None
    named = " and ".join(sorted({str(kind) for kind in kinds}))
    first = " ".join(report.failures[0].cause.split())
    if len(first) > CAUSE_CHARS:
        first = first[:CAUSE_CHARS] + "…"
    return GateFailure(
        EXIT_NOTHING_GRADED,
        f"no attempt started: all {total} final attempts ended in {named}; the first: {first}",
    )


def below_threshold(
    summary: GateCounts, fail_under: float, on: GateOn, *, errors_excluded: bool = False
) -> GateFailure | None:
    """Accuracy (or its interval's lower bound) under `fail_under`, errors counted as failures
    unless `errors_excluded`; a run with nothing counted has no accuracy and is under any
    threshold."""
    from benchyard.report.render import percent
    from benchyard.report.stats import wilson_interval

    trials = summary.counted if errors_excluded else summary.counted + summary.errors
    rate = summary.passed / trials if trials else None
    if on is GateOn.lower_bound:
        interval = wilson_interval(summary.passed, trials)
        value = interval[0] if interval is not None else None
        what = "the lower bound of accuracy's 95% interval"
    else:
        value, what = rate, "accuracy"
    if value is not None and value >= fail_under:
        return None
    errors = (
        ""
        if errors_excluded or not summary.errors
        else f", {summary.errors} error{'' if summary.errors == 1 else 's'} counted as failed; "
        "--fail-under-excludes-errors leaves them out"
    )
    return GateFailure(
        EXIT_BELOW_THRESHOLD,
        f"{what} {percent(value)} is under --fail-under {percent(fail_under)} "
        f"({summary.passed}/{trials} passed{errors})",
    )


def run_gate(
    summary: GateCounts, fail_under: float | None, on: GateOn, *, errors_excluded: bool = False
) -> GateFailure | None:
    """The first gate the run fails, if any: nothing graded, then the threshold."""
    failure = nothing_graded(summary)
    if failure is None and fail_under is not None:
        failure = below_threshold(summary, fail_under, on, errors_excluded=errors_excluded)
    return failure


def _kinds(summary: GateCounts) -> str:
    parts = [
        f"{count} {word}{'' if count == 1 else 's'}"
        for count, word in ((summary.errors, "error"), (summary.timeouts, "timeout"))
        if count
    ]
    return " and ".join(parts)
