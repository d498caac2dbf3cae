"""Two runs whose comparison fills several pages of the grid: 230 scenarios, of which 150 go from
pass to fail, 30 from pass to error, 30 from fail to pass, and 20 pass in both."""

from __future__ import annotations

from benchyard.store.store import Store
from tests.support import attempt_record, run_record

SCENARIOS = 230
CHANGED = 210  # rows that differ
REGRESSIONS = 180  # pass to fail, pass to error
BASELINE, CANDIDATE = "a0" * 16, "b0" * 16


def verdicts(n: int) -> tuple[str, str]:
    """Scenario n's verdict in the baseline and in the candidate."""
    if n < 150:
        return "passed", "failed"
    if n < 180:
        return "passed", "error"
    if n < 210:
        return "failed", "passed"
    return "passed", "passed"


def fill_paged(store: Store) -> tuple[str, str]:
    """The baseline's and the candidate's ids."""
    for side, run_id in enumerate((BASELINE, CANDIDATE)):
        store.create_run(
            run_record(
                run_id,
                benchmark_name="paged",
                agent_name=f"agent-{side}",
                planned_attempts=SCENARIOS,
            )
        )
        store.record_attempts(
            [
                attempt_record(
                    run_id,
                    f"{run_id[:16]}{n:016x}",
                    f"p-{n:03d}",
                    category=f"c{n % 3}",
                    verdict=verdicts(n)[side],
                    score=float(verdicts(n)[side] == "passed"),
                )
                for n in range(SCENARIOS)
            ]
        )
    return BASELINE, CANDIDATE
