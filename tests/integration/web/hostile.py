"""A run whose agent wrote what a terminal or a bidi-aware display would misread: ANSI colours
around markup, a right-to-left override in a scenario id, a cause and a check's reason, an escape
character alone. Written through the store API beside `fill_store`'s runs."""

from __future__ import annotations

from benchyard.store.records import CheckRecord
from benchyard.store.store import Store
from tests.integration.web.support import SCRIPT, T0, Filled
from tests.support import attempt_record, run_record

HOSTILE_RUN = "e0e0e0e0e0e0e005"
RLO = "\u202e"
SPOOFED_ID = f"invoice-{RLO}fdp.exe"  # displays as "invoice-exe.pdf" where the override works
ANSWER = f"\x1b[1;31mFAILED {SCRIPT}\x1b[0m then \x1b[32mgreen\x1b[39m\x1b]0;title\x07 and \x1b"


def add_hostile_run(store: Store, filled: Filled, attempts: int = 3) -> list[str]:
    """The run and its attempts (the spoofed one first, then plain ones): their ids."""
    store.create_run(
        run_record(
            HOSTILE_RUN,
            benchmark_name="webbench",
            benchmark_path=str(filled.benchmark_root.resolve()),
            agent_name=f"alpha{RLO}ateb",
            started_at=T0,
            finished_at=T0,
            planned_attempts=attempts,
        )
    )
    ids = [f"e{n:031d}" for n in range(attempts)]
    store.record_attempts(
        [
            attempt_record(
                HOSTILE_RUN,
                ids[0],
                SPOOFED_ID,
                verdict="failed",
                score=0.0,
                answer=ANSWER,
                cause=f"wrong total {RLO}\u2066 escape \x1b[2J here",
                checks=[
                    CheckRecord(0, "judge", "judge", False, 0.0, 1.0, f"\x1b[33m{RLO}off topic")
                ],
            ),
            *(
                attempt_record(HOSTILE_RUN, attempt_id, f"plain-{n:03d}", answer=f"plain {n}")
                for n, attempt_id in enumerate(ids[1:], start=1)
            ),
        ]
    )
    return ids
