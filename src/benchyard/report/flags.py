"""Attempts and scenarios a human should look at: unusually long attempts, flaky scenarios,
scores within a margin of a pass threshold, attempts that wanted a turn past max_turns, and
attempts whose patch changes the test machinery (noted by the `tests` and `diff_quality` checks).

`long` compares like with like: the agent's turns beyond the user turns its stimulus scripted (a
three-turn conversation answered in three turns has none), against the run's median of those."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Protocol

from benchyard.report.model import ReviewFlag
from benchyard.runner.failures import COUNTED_VERDICTS
from benchyard.store.records import AttemptRecord

# The note checks/patch_scan.py starts a check's reason with, kept here as a value (as
# store/browse.py does) so that a report does not import the patch scanner; a test pins the two.
SUSPICIOUS_PATCH = "suspicious patch: "

LONG_FACTOR = 2.0  # extra turns over this many times the run's median extra turns...
LONG_FLOOR = 1.0  # ... a median under this counting as this (a run of one-turn answers)
NEAR_MARGIN = 0.05  # a partial score this close to its threshold


class FlaggableCheck(Protocol):
    """What a check result's flags are decided on (a CheckRecord, or store/report_rows.py's)."""

    @property
    def label(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def threshold(self) -> float | None: ...
    @property
    def reason(self) -> str: ...


class FlaggableAttempt(Protocol):
    """What an attempt's flags are decided on (an AttemptRecord, or store/report_rows.py's)."""

    @property
    def id(self) -> str: ...
    @property
    def scenario_id(self) -> str: ...
    @property
    def epoch(self) -> int: ...
    @property
    def verdict(self) -> str: ...
    @property
    def turns(self) -> int: ...
    @property
    def user_turns(self) -> int: ...
    @property
    def hit_max_turns(self) -> bool: ...
    @property
    def score(self) -> float: ...
    @property
    def threshold(self) -> float | None: ...
    @property
    def checks(self) -> Sequence[FlaggableCheck]: ...


def extra_turns(attempt: FlaggableAttempt) -> int:
    """The agent's turns beyond the user turns its stimulus scripted."""
    return max(attempt.turns - attempt.user_turns, 0)


def median_extra_turns(attempts: Sequence[AttemptRecord]) -> float:
    """The median extra turns of the counted attempts (0 without any)."""
    counted = [extra_turns(a) for a in attempts if a.verdict in COUNTED_VERDICTS]
    return statistics.median(counted) if counted else 0


def long_limit(median_extra: float) -> float:
    """Extra turns over this make a counted attempt `long`."""
    return LONG_FACTOR * max(median_extra, LONG_FLOOR)


def is_long(attempt: FlaggableAttempt, median_extra: float) -> bool:
    return attempt.verdict in COUNTED_VERDICTS and extra_turns(attempt) > long_limit(median_extra)


def review_flags(
    attempts: Sequence[AttemptRecord], margin: float = NEAR_MARGIN
) -> list[ReviewFlag]:
    """Flags over the final attempts of a run, ordered by scenario and epoch."""
    counted = [a for a in attempts if a.verdict in COUNTED_VERDICTS]
    median = median_extra_turns(counted)
    flags = [long_flag(a, median) for a in attempts if is_long(a, median)]
    for attempt in attempts:
        flags += attempt_flags(attempt, margin)
    tallies: dict[str, tuple[int, int]] = {}
    for attempt in counted:
        passed, total = tallies.get(attempt.scenario_id, (0, 0))
        tallies[attempt.scenario_id] = (passed + (attempt.verdict == "passed"), total + 1)
    return sorted_flags(flags + flaky_flags(tallies))


def sorted_flags(flags: list[ReviewFlag]) -> list[ReviewFlag]:
    return sorted(flags, key=flag_order)


def flag_order(flag: ReviewFlag) -> tuple[str, int, str]:
    """A report's flags are in this order: by scenario, epoch (a scenario's flag first), kind."""
    return flag.scenario_id, flag.epoch or 0, flag.kind


def long_flag(attempt: FlaggableAttempt, median_extra: float) -> ReviewFlag:
    return _flag("long", attempt, _long_detail(attempt, median_extra))


def attempt_flags(attempt: FlaggableAttempt, margin: float = NEAR_MARGIN) -> list[ReviewFlag]:
    """The flags of one attempt that no other attempt decides: a score near its threshold, a
    turn wanted past max_turns, a patch that changes the test machinery."""
    flags = _near_threshold(attempt, margin)
    if attempt.hit_max_turns:
        detail = f"wanted another turn after {_turns(attempt.turns)}"
        flags.append(_flag("hit_max_turns", attempt, detail))
    return flags + _suspicious_patch(attempt)


def _turns(count: int) -> str:
    return f"{count} turn{'' if count == 1 else 's'}"


def _long_detail(attempt: FlaggableAttempt, median: float) -> str:
    scripted = f"{attempt.user_turns} scripted user turn{'' if attempt.user_turns == 1 else 's'}"
    return (
        f"{_turns(attempt.turns)} for {scripted}: {extra_turns(attempt)} beyond them, over "
        f"{long_limit(median):g} ({LONG_FACTOR:g}x the run's median of {median:g}, "
        f"counted as at least {LONG_FLOOR:g})"
    )


def _flag(kind: str, attempt: FlaggableAttempt, detail: str) -> ReviewFlag:
    return ReviewFlag(
        kind=kind,
        scenario_id=attempt.scenario_id,
        epoch=attempt.epoch,
        attempt_id=attempt.id,
        detail=detail,
    )


def _near_threshold(attempt: FlaggableAttempt, margin: float) -> list[ReviewFlag]:
    """Partial scores (strictly between 0 and 1) within `margin` of their pass mark: a check's
    own threshold (a judge's min_score, say) or the scenario's threshold on the weighted score."""
    marks = [(c.label, c.score, c.threshold) for c in attempt.checks]
    if attempt.verdict in ("passed", "failed"):
        marks.append(("scenario score", attempt.score, attempt.threshold))
    return [
        _flag("near_threshold", attempt, f"{label}: score {score:.3f}, threshold {threshold:g}")
        for label, score, threshold in marks
        if threshold is not None and 0 < score < 1 and abs(score - threshold) <= margin
    ]


def _suspicious_patch(attempt: FlaggableAttempt) -> list[ReviewFlag]:
    """One flag when a check noted that the attempt's patch changes the test machinery
    (checks/patch_scan.py), whatever the verdict: a pass is what such a patch would forge."""
    for check in attempt.checks:
        _, found, findings = check.reason.partition(SUSPICIOUS_PATCH)
        if found:
            return [_flag("suspicious_patch", attempt, f"{check.label}: {findings}")]
    return []


def flaky_flags(tallies: Mapping[str, tuple[int, int]]) -> list[ReviewFlag]:
    """A flag per scenario that passed some of its counted epochs but not all: `tallies` maps
    each scenario to (passed, counted)."""
    return [
        ReviewFlag(
            kind="flaky",
            scenario_id=scenario_id,
            epoch=None,
            attempt_id=None,
            detail=f"passed {passed} of {counted} epochs",
        )
        for scenario_id, (passed, counted) in tallies.items()
        if 0 < passed < counted
    ]
