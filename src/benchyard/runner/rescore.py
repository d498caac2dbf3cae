"""Rescoring: the checks evaluated again on a run's recorded answers, trajectories and patches,
without running the agent, into a new run linked to the original (`rescored_from`).

For when a check, a judge or a reference was fixed. Attempts the checks saw whole (graded ones,
those whose check could not run or could not grade the answer, and those whose judge's reply
could not be read) are graded again through runner/grading.py's `grade`, the
runner's own entry point; a coding scenario's recorded patch is graded in fresh verification
sandboxes as in a run. Other attempts (crashes, timeouts, errors) are copied as they were.
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.execute import RunSettings
from benchyard.runner.failures import AttemptFailure, FailureKind
from benchyard.runner.grading import Grade, grade
from benchyard.runner.loop import run_async
from benchyard.runner.patches import apply_patch_or_fail
from benchyard.runner.recorded import RunRefused, recorded_settings
from benchyard.runner.two_phase import ChangeGrader, needs_two_phase
from benchyard.spec.loader import Benchmark
from benchyard.spec.models import Scenario
from benchyard.store.records import AttemptRecord, RunRecord
from benchyard.store.store import Store

if TYPE_CHECKING:
    from benchyard.providers.judge import Judge

REGRADABLE = frozenset(
    {
        None,
        FailureKind.CHECK_ERROR.value,
        FailureKind.UNGRADABLE_ANSWER.value,
        FailureKind.JUDGE_UNPARSEABLE.value,
    }
)
"""Failure kinds of attempts whose answers the checks saw whole (None: graded)."""

WRITE_EVERY = 256
PATCH_NOT_KEPT = "# patch not kept"  # how runner/patches.py stores a change it refused to keep


@dataclass
class RescoreOutcome:
    run: RunRecord
    regraded: int = 0
    copied: int = 0  # attempts without an answer to grade (crash, timeout...), kept as they were
    to_pass: list[tuple[str, int]] = field(default_factory=list)  # (scenario, epoch) now passing
    to_fail: list[tuple[str, int]] = field(default_factory=list)  # no longer passing


def rescore_run(
    store: Store, original: RunRecord, benchmark_path: str | None = None
) -> RescoreOutcome:
    """Grade `original`'s final attempts again with the benchmark at `benchmark_path` (default:
    the run's own path, as it is now) into a new, finished run."""
    if original.kind != "benchmark":
        raise RunRefused(
            f"run {original.id[:8]} is a {original.kind} run: it has no answers to grade again"
        )
    benchmark = load_benchmark(benchmark_path or original.benchmark_path)
    if benchmark.name != original.benchmark_name:
        raise RunRefused(
            f"the benchmark at {benchmark.root} is '{benchmark.name}', but run {original.id[:8]} "
            f"ran '{original.benchmark_name}'"
        )
    run = replace(
        original,
        id=uuid.uuid4().hex[:16],
        status="running",
        benchmark_version=benchmark.version,
        benchmark_hash=benchmark.content_hash,
        benchmark_path=str(benchmark.root),
        started_at=datetime.now(UTC),
        finished_at=None,
        status_reason=None,
        rescored_from=original.id,
    )
    attempts = store.attempts(original.id, with_evidence=True)
    run.planned_attempts = len(attempts)
    store.create_run(run)
    outcome = RescoreOutcome(run)
    try:
        run_async(_rescore_all(store, benchmark, recorded_settings(original), attempts, outcome))
    except BaseException:
        store.finish_run(run.id, "interrupted")
        raise
    store.finish_run(run.id, "finished")
    run.status = "finished"
    return outcome


async def _rescore_all(
    store: Store,
    benchmark: Benchmark,
    settings: RunSettings,
    attempts: list[AttemptRecord],
    outcome: RescoreOutcome,
) -> None:
    from benchyard.providers.judge import build_judge

    judge = build_judge(settings.judge)
    scenarios = {scenario.id: scenario for scenario in benchmark.scenarios}
    batch: list[AttemptRecord] = []
    with ChangeGrader(benchmark, settings) as changes:
        try:
            for attempt in attempts:
                batch.append(await _rescored(attempt, scenarios, changes, judge, outcome))
                if len(batch) >= WRITE_EVERY:
                    store.record_attempts(batch)
                    batch = []
            store.record_attempts(batch)
        finally:
            if judge is not None:
                await judge.aclose()


async def _rescored(
    attempt: AttemptRecord,
    scenarios: dict[str, Scenario],
    changes: ChangeGrader,
    judge: Judge | None,
    outcome: RescoreOutcome,
) -> AttemptRecord:
    copy = replace(attempt, id=uuid.uuid4().hex, run_id=outcome.run.id)
    scenario = scenarios.get(attempt.scenario_id)
    if scenario is None or attempt.failure_kind not in REGRADABLE:
        outcome.copied += 1
        if scenario is None:
            copy.verdict, copy.score, copy.checks = "error", 0.0, []
            copy.failure_kind = FailureKind.HARNESS_ERROR.value
            copy.cause = f"scenario '{attempt.scenario_id}' is not in the benchmark any more"
        return copy
    outcome.regraded += 1
    copy.threshold = scenario.threshold
    copy.scenario_hash = None  # graded by the benchmark as it is now, not as the attempt ran
    try:
        graded = await _grade(scenario, attempt, changes, judge)
        copy.verdict = "passed" if graded.passed else "failed"
        copy.score, copy.checks, copy.cause = graded.score, graded.checks, graded.cause
        copy.failure_kind = graded.failure_kind
    except AttemptFailure as failure:
        copy.score, copy.checks, copy.failure_kind = 0.0, [], failure.kind.value
        copy.verdict, copy.cause = failure.outcome(retried=False, tries=1)
    was, now = attempt.verdict == "passed", copy.verdict == "passed"
    if was != now:
        (outcome.to_pass if now else outcome.to_fail).append((attempt.scenario_id, attempt.epoch))
    return copy


async def _grade(
    scenario: Scenario, attempt: AttemptRecord, changes: ChangeGrader, judge: Judge | None
) -> Grade:
    """Through `grade`, as in a run; a coding scenario's recorded patch goes onto its pristine
    fixtures and each code check gets a fresh verification sandbox (runner/two_phase.py)."""
    answers, trajectory = _answers(attempt, scenario), attempt.trajectory or []
    if not needs_two_phase(scenario):
        return await grade(scenario, answers, trajectory, None, judge)
    restore = functools.partial(_restore_change, attempt.patch)
    return await changes.grade(scenario, answers, trajectory, restore, judge)


def _answers(attempt: AttemptRecord, scenario: Scenario) -> list[str]:
    """Every turn's answer: recorded for multi-turn attempts; one-turn attempts keep `answer`."""
    if attempt.answers is not None:
        return attempt.answers
    return [""] * (len(scenario.stimulus.turns) - 1) + [attempt.answer or ""]


async def _restore_change(patch: str | None, workdir: Path) -> None:
    """Put the agent's recorded change back onto the pristine fixtures in `workdir`."""
    if not patch:
        return
    if patch.startswith(PATCH_NOT_KEPT):
        raise AttemptFailure(
            FailureKind.CHECK_ERROR,
            "the attempt's change was not kept, so it cannot be graded again",
        )
    failed = "the recorded patch does not apply to the benchmark's fixtures now"
    await apply_patch_or_fail(patch, workdir, FailureKind.CHECK_ERROR, failed)
