"""Hostile agents: an agent must not hide the answers it is unsure of from accuracy by claiming an
infrastructure fault of its own through its exit status (75: a transient fault; 126/127: the
command could not run). Such a claim is retried like a fault, but once its retries are spent it
counts against the agent, and `compare --fail-on-regression` sees the drop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from benchyard.runner.execute import RunSettings, _AttemptExecutor, _NoObserver
from benchyard.runner.failures import (
    CLAIMED_KINDS,
    COUNTED_VERDICTS,
    POLICIES,
    AttemptFailure,
    FailureKind,
)
from benchyard.runner.plan import PlannedAttempt
from benchyard.spec.models import Scenario
from benchyard.store.queue import ClaimedAttempt
from benchyard.store.records import AttemptRecord
from benchyard.store.store import Store
from tests.support import UNSANDBOXED, Cli, attempt_record, scenario, write_benchmark

SCENARIOS = [f"q{n:02d}" for n in range(12)]
KNOWN = set(SCENARIOS[:3])  # what the agent is sure of: 25%

AGENT = """
import os, sys
known, unsure = sys.argv[1].split(","), sys.argv[2]
sid = os.environ["BENCHYARD_SCENARIO_ID"]
if sid in known:
    print(f"answer-{sid}")
elif unsure == "guess":
    print("I am not sure")
else:
    print("not now, try me later", file=sys.stderr)
    sys.exit(int(unsure))
"""


def _run(cli: Cli, store: Store, bench: Path, agent: Path, known: set[str], unsure: str) -> str:
    command = f"python3 {agent} {','.join(sorted(known)) or '-'} {unsure}"
    options = ("--retries", "2", "--retry-backoff", "0.01", "-q", *UNSANDBOXED)
    result = cli("run", str(bench), "--agent-cmd", command, *options)
    assert result.exit_code == 0, result.output
    return store.resolve_run("latest").id


@pytest.fixture
def bench(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    scenarios = [scenario(sid, f"answer-{sid}") for sid in SCENARIOS]
    return write_benchmark(tmp_path / "bench", scenarios), agent


@pytest.mark.parametrize(("exit_code", "kind"), [(75, "agent_tempfail"), (127, "agent_start")])
def test_claiming_a_fault_when_unsure_does_not_raise_accuracy(
    cli: Cli, store: Store, bench: tuple[Path, Path], exit_code: int, kind: str
) -> None:
    path, agent = bench
    good = _run(cli, store, path, agent, set(SCENARIOS), "guess")
    honest = _run(cli, store, path, agent, KNOWN, "guess")
    claiming = _run(cli, store, path, agent, KNOWN, str(exit_code))

    def summary(run_id: str) -> dict[str, object]:
        report = json.loads(cli("report", run_id, "--format", "json").output)
        return dict(report["summary"])

    honest_summary, claiming_summary = summary(honest), summary(claiming)
    assert honest_summary["accuracy"] == pytest.approx(0.25)
    assert claiming_summary["accuracy"] <= honest_summary["accuracy"]  # type: ignore[operator]
    assert (claiming_summary["errors"], claiming_summary["counted"]) == (0, 12)
    assert claiming_summary["claimed_faults"] == 9

    # Every try is kept; the final one is a counted failure whose cause says why.
    tries = store.attempts(claiming, include_superseded=True)
    unsure = [t for t in tries if t.scenario_id == "q05"]
    assert [(t.try_number, t.superseded, t.verdict, t.failure_kind) for t in unsure] == [
        (1, True, "error", kind),
        (2, True, "error", kind),
        (3, False, "failed", kind),
    ]
    assert f"exit {exit_code}" in (unsure[-1].cause or "")
    assert "claimed by the agent's exit status" in (unsure[-1].cause or "")
    markdown = cli("report", claiming, "--format", "md").output
    assert f"failed ({kind})" in markdown
    shown = cli("show", claiming, "q05").output
    assert f"verdict failed ({kind}, claimed by the agent)" in shown

    # Against a good baseline the claiming run is a regression, not "no significant change".
    compared = cli("compare", good, claiming, "--fail-on-regression", "--format", "md")
    assert compared.exit_code == 1, compared.output
    assert "no significant change" not in compared.output
    assert "significant regression" in compared.output
    # ... as the honest run is; and the two are alike.
    assert cli("compare", good, honest, "--fail-on-regression").exit_code == 1
    alike = json.loads(cli("compare", honest, claiming, "--format", "json").output)
    [candidate] = alike["candidates"]
    assert (candidate["pass_to_fail"], candidate["fail_to_pass"], candidate["regression"]) == (
        0,
        0,
        False,
    )


def test_only_claimed_faults_count_against_the_agent() -> None:
    """The failure table: the faults an agent can claim by its exit status are retried and then
    counted, as are answers the checks or the judge could not grade; every fault benchyard
    observes in its own machinery stays an uncounted error."""
    assert set(CLAIMED_KINDS) == {FailureKind.AGENT_TEMPFAIL.value, FailureKind.AGENT_START.value}
    for kind, policy in POLICIES.items():
        assert policy.counts == (policy.verdict in COUNTED_VERDICTS), kind
        if policy.claimed:
            assert policy.retry and policy.counts and policy.verdict == "failed", kind
    observed = (
        FailureKind.SANDBOX_START,
        FailureKind.PROVIDER_UNAVAILABLE,
        FailureKind.PROVIDER_REJECTED,
        FailureKind.CHECK_ERROR,
        FailureKind.HARNESS_ERROR,
    )
    for kind in observed:
        assert (POLICIES[kind].counts, POLICIES[kind].verdict) == (False, "error"), kind
    # What the answer may have caused (a check it broke, a judge it steered) counts against it.
    for kind in (FailureKind.UNGRADABLE_ANSWER, FailureKind.JUDGE_UNPARSEABLE):
        assert (POLICIES[kind].counts, POLICIES[kind].verdict) == (True, "failed"), kind


class _ClaimsAFaultEveryTry(_AttemptExecutor):
    """The retry loop alone: every try ends as one_try ends a try whose agent exited 75."""

    def __init__(self, settings: RunSettings) -> None:  # no sandbox, judge or store needed
        self.settings = settings
        self.writer = self  # type: ignore[assignment]
        self.observer = _NoObserver()
        self.written: list[AttemptRecord] = []
        self._tries_written: dict[int, int] = {}  # as _bind makes it (the watchdog's try count)

    def add(self, record: AttemptRecord, item: ClaimedAttempt) -> None:
        self.written.append(record)

    async def one_try(
        self, planned: PlannedAttempt, try_number: int
    ) -> tuple[AttemptRecord, AttemptFailure | None]:
        failure = AttemptFailure(FailureKind.AGENT_TEMPFAIL, "agent reported a transient fault")
        record = attempt_record("r" * 16, f"t{try_number}", "q", try_number=try_number)
        record.verdict, record.cause = failure.policy.verdict, failure.message
        record.failure_kind = failure.kind
        return record, failure


@pytest.mark.parametrize(("written", "expected"), [(0, [1, 2, 3]), (2, [3]), (5, [6])])
def test_a_resumed_attempt_goes_on_from_the_tries_already_written(
    tmp_path: Path, written: int, expected: list[int]
) -> None:
    """After a crash the tries already written count: the retry budget is not granted again, and
    the try that ends it is the counted failure."""
    executor = _ClaimsAFaultEveryTry(RunSettings(retries=2, retry_backoff_sec=0.0))
    item = ClaimedAttempt(id=1, run_id="r" * 16, scenario_id="q", epoch=1, tries=written)
    planned = PlannedAttempt(Scenario.model_validate(scenario("q", "x")), 1)
    asyncio.run(executor.attempt_with_retries(planned, item))
    tries = [(r.try_number, r.superseded, r.verdict) for r in executor.written]
    last = expected[-1]
    assert tries == [(n, n != last, "error" if n != last else "failed") for n in expected]
    assert f"counted as failed after {last} tries" in (executor.written[-1].cause or "")
