"""What a failure means, decided in one table: retried?, graded?, counted in the score?, which
verdict?, and is the fault only claimed by the agent?

A try that is retried is always an uncounted `error` (RETRIED_VERDICT) and stays in the store as
superseded; the final try takes its kind's verdict. A fault benchyard observed itself (a sandbox
that did not start, its own client's provider errors, a check or judge that could not run, its own
bugs) ends as an uncounted `error`. A fault the agent merely claims through its exit status (75:
a transient fault of its own; 126/127: the command could not run) is retried like one, but the
exit status is the agent's to choose: once its retries are spent it counts against the agent
(`failed`), or an agent could hide every answer it is unsure of from accuracy.

An answer the checks cannot grade is the agent's too: a check that raises on it (a 5,000-digit JSON
integer, `1e999999`, nesting too deep to read) fails the attempt (`ungradable_answer`, counted,
its cause saying why), and a judge whose reply stays unreadable is retried and then counted as
failed (`judge_unparseable`): an answer can steer its judge, so an unreadable reply is no proof of a
broken judge. Only what benchyard observes in its own machinery (a judge provider that is down, a
sandbox that did not start, a check that says it could not run) stays an uncounted error."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchyard.agents.base import AgentResult


class FailureKind(StrEnum):
    SANDBOX_START = "sandbox_start"  # the sandbox or workdir could not be prepared
    AGENT_START = "agent_start"  # the agent command could not run (exit 126/127, claimed)
    AGENT_TEMPFAIL = "agent_tempfail"  # the agent reported a transient fault of its own (exit 75)
    AGENT_TIMEOUT = "agent_timeout"  # the attempt ran past its wall-clock limit
    AGENT_CRASH = "agent_crash"  # the agent exited non-zero
    RESOURCE_LIMIT = "resource_limit"  # the sandbox stopped the agent at its memory/process limit
    MAX_TURNS = "max_turns"  # the agent used more turns than allowed
    ATTEMPT_BUDGET = "attempt_budget"  # its model calls spent the attempt's tokens or dollars
    RUN_BUDGET = "run_budget"  # the run's --budget was spent while it ran (not the agent's fault)
    MISSING_REFERENCE = "missing_reference"  # the oracle was asked for a scenario with no reference
    CHECK_ERROR = "check_error"  # a check could not be evaluated (not the answer's fault)
    HARNESS_ERROR = "harness_error"  # a bug or unexpected fault inside benchyard
    PROVIDER_UNAVAILABLE = "provider_unavailable"  # 429/5xx/connection/truncation, retries spent
    PROVIDER_REJECTED = "provider_rejected"  # the endpoint refused the request (4xx, no API key)
    REASONING_TRUNCATED = "reasoning_truncated"  # empty answer: the token budget went to reasoning
    JUDGE_UNPARSEABLE = "judge_unparseable"  # the judge model's reply could not be read
    UNGRADABLE_ANSWER = "ungradable_answer"  # a check raised on the answer: it could not grade it


@dataclass(frozen=True)
class Policy:
    retry: bool
    grade: bool
    counts: bool  # does the final try's verdict count in accuracy (False: shown apart as an error)
    verdict: str  # the final try's verdict (a try that is retried is RETRIED_VERDICT)
    claimed: bool = False  # only the agent's exit status says so: benchyard saw no fault itself
    held_against_answer: bool = False  # counted once retries are spent: the answer may be the cause


RETRIED_VERDICT = "error"  # a try superseded by a retry: kept as evidence, never counted

POLICIES: dict[FailureKind, Policy] = {
    FailureKind.SANDBOX_START: Policy(retry=True, grade=False, counts=False, verdict="error"),
    # Claimed by the agent: retried, then held against it (see the module's docstring).
    FailureKind.AGENT_START: Policy(
        retry=True, grade=False, counts=True, verdict="failed", claimed=True
    ),
    FailureKind.AGENT_TEMPFAIL: Policy(
        retry=True, grade=False, counts=True, verdict="failed", claimed=True
    ),
    FailureKind.AGENT_TIMEOUT: Policy(retry=False, grade=False, counts=True, verdict="timeout"),
    FailureKind.AGENT_CRASH: Policy(retry=False, grade=False, counts=True, verdict="failed"),
    FailureKind.RESOURCE_LIMIT: Policy(retry=False, grade=False, counts=True, verdict="failed"),
    FailureKind.MAX_TURNS: Policy(retry=False, grade=False, counts=True, verdict="failed"),
    FailureKind.ATTEMPT_BUDGET: Policy(retry=False, grade=False, counts=True, verdict="failed"),
    # The run's limit, not the agent's: shown apart, and not retried (a retry would spend more).
    FailureKind.RUN_BUDGET: Policy(retry=False, grade=False, counts=False, verdict="error"),
    FailureKind.MISSING_REFERENCE: Policy(retry=False, grade=False, counts=False, verdict="error"),
    FailureKind.CHECK_ERROR: Policy(retry=True, grade=False, counts=False, verdict="error"),
    FailureKind.HARNESS_ERROR: Policy(retry=False, grade=False, counts=False, verdict="error"),
    FailureKind.PROVIDER_UNAVAILABLE: Policy(
        retry=True, grade=False, counts=False, verdict="error"
    ),
    FailureKind.PROVIDER_REJECTED: Policy(retry=False, grade=False, counts=False, verdict="error"),
    # Already retried once inside the attempt with reasoning lowered; `rerun --recover` re-runs it.
    FailureKind.REASONING_TRUNCATED: Policy(
        retry=False, grade=False, counts=True, verdict="failed"
    ),
    # The answer may have steered its judge (see the module's docstring): retried, then counted.
    FailureKind.JUDGE_UNPARSEABLE: Policy(
        retry=True, grade=False, counts=True, verdict="failed", held_against_answer=True
    ),
    # Graded: the other checks' results are kept; the attempt fails whatever its threshold.
    FailureKind.UNGRADABLE_ANSWER: Policy(retry=False, grade=True, counts=True, verdict="failed"),
}

COUNTED_VERDICTS = frozenset({"passed", "failed", "timeout"})
CLAIMED_KINDS = frozenset(kind.value for kind, policy in POLICIES.items() if policy.claimed)


class AttemptFailure(Exception):
    """Raised by agents, sandboxes and checks; the runner looks its kind up in POLICIES."""

    def __init__(self, kind: FailureKind, message: str, partial: AgentResult | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.partial = partial

    @property
    def policy(self) -> Policy:
        return POLICIES[self.kind]

    def outcome(self, *, retried: bool, tries: int) -> tuple[str, str]:
        """The verdict and cause of a try that ended in this failure: RETRIED_VERDICT when it is
        retried; else the table's verdict, and a claimed fault's cause says why it counts."""
        if retried:
            return RETRIED_VERDICT, self.message
        tried = f"{tries} {'try' if tries == 1 else 'tries'}"
        if self.policy.held_against_answer:
            return self.policy.verdict, (
                f"{self.message} [the answer could not be graded: counted as "
                f"{self.policy.verdict} after {tried}]"
            )
        if not self.policy.claimed:
            return self.policy.verdict, self.message
        return self.policy.verdict, (
            f"{self.message} [claimed by the agent's exit status, not observed by benchyard: "
            f"counted as {self.policy.verdict} after {tried}]"
        )
