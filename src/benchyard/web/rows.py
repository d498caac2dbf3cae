"""Runs and attempts as table rows: the figures each row shows, from the store's tallies (those of
runs that ended are remembered)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from weakref import WeakKeyDictionary

from benchyard.report.flags import is_long, review_flags
from benchyard.report.stats import wilson_interval
from benchyard.runner.failures import CLAIMED_KINDS
from benchyard.store.browse import COUNTED, RunTally, run_tallies
from benchyard.store.records import AttemptRecord, RunRecord
from benchyard.store.store import Store
from benchyard.web.models import AttemptRow, CheckBrief, RunRow

ACTIVE = frozenset({"queued", "running"})
REMEMBERED_TALLIES = 4_096


def is_subset(run: RunRecord) -> bool:
    """A run of part of its benchmark: filtered, limited, or a rerun of some attempts."""
    settings = run.settings or {}
    return bool(settings.get("filters") or settings.get("limit") or run.parent_run_id)


def run_rows(store: Store, runs: Sequence[RunRecord]) -> list[RunRow]:
    tallies = _remembered(store).tallies(store, runs)
    return [run_row(run, tallies.get(run.id, RunTally(run.id))) for run in runs]


class TallyCache:
    """The tallies of runs that can no longer change (not queued, not running), by run id, status
    and end: a list of runs counts only its runs that are new or still going (every view of the
    runs list counted every attempt of its 50 runs again)."""

    def __init__(self, size: int = REMEMBERED_TALLIES) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, str, object], RunTally] = OrderedDict()
        self._lock = threading.Lock()

    def tallies(self, store: Store, runs: Sequence[RunRecord]) -> dict[str, RunTally]:
        found: dict[str, RunTally] = {}
        with self._lock:
            for run in runs:
                known = self._entries.get(_key(run)) if run.status not in ACTIVE else None
                if known is not None:
                    self._entries.move_to_end(_key(run))
                    found[run.id] = known
        missing = [run for run in runs if run.id not in found]
        counted = run_tallies(store, [run.id for run in missing]) if missing else {}
        with self._lock:
            for run in missing:
                tally = counted.get(run.id, RunTally(run.id))
                found[run.id] = tally
                if run.status not in ACTIVE:
                    self._entries[_key(run)] = tally
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return found


def _key(run: RunRecord) -> tuple[str, str, object]:
    return run.id, run.status, run.finished_at


_caches: WeakKeyDictionary[Store, TallyCache] = WeakKeyDictionary()
_caches_lock = threading.Lock()


def _remembered(store: Store) -> TallyCache:
    """The tallies remembered for this open store."""
    with _caches_lock:
        cache = _caches.get(store)
        if cache is None:
            cache = _caches[store] = TallyCache()
        return cache


def run_row(run: RunRecord, tally: RunTally) -> RunRow:
    duration = (
        (run.finished_at - run.started_at).total_seconds() if run.finished_at is not None else None
    )
    return RunRow(
        id=run.id,
        status=run.status,
        status_reason=run.status_reason,
        benchmark=run.benchmark_name,
        version=run.benchmark_version,
        benchmark_hash=run.benchmark_hash,
        agent=run.agent_name,
        commit=run.agent_commit,
        dirty=run.agent_dirty,
        started_at=run.started_at,
        finished_at=run.finished_at,
        duration_sec=duration,
        planned=run.planned_attempts,
        finished=tally.attempts,
        passed=tally.passed,
        counted=tally.counted,
        errors=tally.errors,
        timeouts=tally.timeouts,
        accuracy=tally.passed / tally.counted if tally.counted else None,
        accuracy_ci95=wilson_interval(tally.passed, tally.counted),
        error_rate=tally.errors / tally.attempts if tally.attempts else None,
        cost_usd=tally.cost_usd,
        judge_cost_usd=tally.judge_cost_usd,
        attempt_sec=tally.attempt_sec,
        parent_run_id=run.parent_run_id,
        rescored_from=run.rescored_from,
        subset=is_subset(run),
        active=run.status in ACTIVE,
    )


def attempt_row(
    attempt: AttemptRecord, *, median_turns: float = 0, flaky: bool = False
) -> AttemptRow:
    return AttemptRow(
        id=attempt.id,
        scenario_id=attempt.scenario_id,
        category=attempt.category,
        epoch=attempt.epoch,
        try_number=attempt.try_number,
        superseded=attempt.superseded,
        verdict=attempt.verdict,
        score=attempt.score,
        cause=attempt.cause,
        failure_kind=attempt.failure_kind,
        claimed=attempt.failure_kind in CLAIMED_KINDS,
        turns=attempt.turns,
        tokens_in=attempt.tokens_in,
        tokens_out=attempt.tokens_out,
        cost_usd=attempt.cost_usd,
        judge_cost_usd=attempt.judge_cost_usd,
        duration_sec=attempt.duration_sec,
        flags=attempt_flags(attempt, median_turns, flaky),
        checks=[
            CheckBrief(label=check.label, check_type=check.check_type, passed=check.passed)
            for check in attempt.checks
        ],
    )


def attempt_flags(attempt: AttemptRecord, median_turns: float, flaky: bool) -> list[str]:
    """The review flags report/flags.py raises on this attempt: those it decides alone, `long`
    against the run's median extra turns, and `flaky` when its scenario is."""
    if attempt.superseded:
        return []
    kinds: set[str] = {flag.kind for flag in review_flags([attempt]) if flag.kind != "flaky"}
    counted = attempt.verdict in COUNTED
    if is_long(attempt, median_turns):
        kinds.add("long")
    if flaky and counted:
        kinds.add("flaky")
    return sorted(kinds)
