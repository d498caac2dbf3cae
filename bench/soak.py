"""The tail of attempt completion under a soak (issue 20): how long after each try's own end the
harness recorded it, with agents and sandboxes killed and stopped at random, against the same load
left alone.

The load is the soak test's (tests/integration/soak/load.py): BENCH_SOAK_RUNS short runs (default
24, about 90 attempts) of tool-server, coding and plain-answer scenarios in the bwrap sandbox, at
concurrencies from 1 to 16, four runs at once in one event loop, through the library API. Two
loads per repetition, interleaved: `calm` (only the agent's own hangs, claimed faults and
background leftovers) and `chaos` (the same runs, while a thread sends SIGKILL or SIGSTOP to a
random agent or bwrap process every 0.1-0.4 s, leaving stopped ones stopped). BENCH_SOAK_REPEAT
repetitions (default 3), each with runs of its own.

A try's end is the last thing that ended it: the deadline for a timeout (the try's start plus its
limit, so the lateness is duration - limit); else the later of the agent's own clock just before it
exited (written to its trajectory) and the first SIGKILL the chaos sent its agent or sandbox. The
figure is the try's stored `finished_at` minus that end, grading included (a code check's sandbox
runs in it). Tries whose code check's sandbox was stopped (they wait for the check's own limit, by
design) and tries with no known end (a sandbox killed before the agent wrote anything) are
counted, not measured. Printed for each load: p50, p99 and max of that figure over every try, the
attempts that needed the watchdog (a cause naming it: runner/watchdog.py) and the timeouts recorded
more than the process's bounded waits (EXIT_POLL_SEC + KILL_GRACE_SEC + DRAIN_AFTER_KILL_SEC, 8 s)
past their deadline, each as a ratio to the attempts run; medians of the repetitions with their
range, and chaos over calm. A run that does not end, an attempt recorded twice or missing, or a
harness error stops the bench: the figures would mean nothing.
The store is PostgreSQL (BENCHYARD_BENCH_PG, default postgresql://root@127.0.0.1:5432/test), in a
schema of its own that is dropped afterwards.
Run: .venv/bin/python bench/soak.py
"""

from __future__ import annotations

import math
import os
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from common import ratios, spread

# bench/ is first on sys.path, and bench/queue.py would stand in for the standard library's queue
# (which psycopg imports): keep this directory off the path once `common` is in, and put the
# repository's root on it for the soak's load (tests/integration/soak/load.py).
HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

from tests.conftest import private_schema  # noqa: E402
from tests.integration.soak.load import (  # noqa: E402
    END_MARK,
    KINDS,
    TIMEOUT_SEC,
    Chaos,
    Outcome,
    RunSpec,
    Soak,
    Strike,
    leftover_processes,
    leftover_scratch,
    parents,
    random_specs,
    run_load,
    run_problems,
    short_work_root,
)

from benchyard.sandbox.process import (  # noqa: E402
    DRAIN_AFTER_KILL_SEC,
    EXIT_POLL_SEC,
    KILL_GRACE_SEC,
)
from benchyard.store.records import AttemptRecord  # noqa: E402
from benchyard.store.store import Store  # noqa: E402

RUNS = int(os.environ.get("BENCH_SOAK_RUNS", "24"))
REPEATS = int(os.environ.get("BENCH_SOAK_REPEAT", "3"))
LANES = 4
PG_URL = os.environ.get("BENCHYARD_BENCH_PG", "postgresql://root@127.0.0.1:5432/test")
LATE_SEC = EXIT_POLL_SEC + KILL_GRACE_SEC + DRAIN_AFTER_KILL_SEC
LOADS = ("calm", "chaos")


@dataclass
class Figures:
    """One load's figures."""

    attempts: int = 0
    tries: int = 0
    late_sec: list[float] = field(default_factory=list)  # each measured try's lateness
    by_kind: dict[str, list[float]] = field(default_factory=dict)
    unknown_end: int = 0
    check_stopped: int = 0
    watchdog: int = 0  # attempts a try of which names the watchdog in its cause
    late_timeouts: int = 0
    signals: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (`share` of 1)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def one_load(soak: Soak, store: Store, specs: list[RunSpec], chaos_seed: int | None) -> Figures:
    """Run `specs` (with the chaos when `chaos_seed` is given) and read its figures back."""
    known = set(parents())
    started = time.perf_counter()
    strikes: list[Strike] = []
    signals: Counter[str] = Counter()
    if chaos_seed is None:
        outcomes = run_load(soak, specs, LANES)
    else:
        with Chaos(soak.agent_script, random.Random(chaos_seed)) as chaos:
            outcomes = run_load(soak, specs, LANES)
        strikes, signals = chaos.strikes, chaos.counts()
    figures = Figures(seconds=time.perf_counter() - started, signals=signals)
    refuse_meaningless(store, outcomes, soak, known)
    killed: dict[str, float] = {}
    stopped_checks: set[str] = set()
    for strike in strikes:
        if strike.attempt_id is None:
            continue
        if strike.checking:
            if strike.signal == signal.SIGSTOP:
                stopped_checks.add(strike.attempt_id)
        elif strike.signal == signal.SIGKILL:
            killed.setdefault(strike.attempt_id, strike.at)
    for outcome in outcomes:
        assert outcome.run is not None
        tries = store.attempts(outcome.run.id, include_superseded=True, with_evidence=True)
        figures.attempts += sum(1 for attempt in tries if not attempt.superseded)
        figures.tries += len(tries)
        watched = {(a.scenario_id, a.epoch) for a in tries if "watchdog" in (a.cause or "").lower()}
        figures.watchdog += len(watched)
        for attempt in tries:
            if attempt.verdict == "timeout" and attempt.duration_sec - TIMEOUT_SEC > LATE_SEC:
                figures.late_timeouts += 1
            if attempt.id in stopped_checks:
                figures.check_stopped += 1
                continue
            late = lateness_sec(attempt, killed.get(attempt.id))
            if late is None:
                figures.unknown_end += 1
                continue
            figures.late_sec.append(late)
            figures.by_kind.setdefault(attempt.category, []).append(late)
    return figures


def lateness_sec(attempt: AttemptRecord, killed_at: float | None) -> float | None:
    """How long after its end the try was recorded (None when its end is not known)."""
    if attempt.verdict == "timeout":
        return attempt.duration_sec - TIMEOUT_SEC
    ends = [killed_at] if killed_at is not None else []
    for event in attempt.trajectory or []:
        if event.kind == "log" and event.content.startswith(END_MARK):
            ends.append(float(event.content[len(END_MARK) :]))
    if not ends:
        return None
    return attempt.finished_at.timestamp() - max(ends)


def refuse_meaningless(store: Store, outcomes: list[Outcome], soak: Soak, known: set[int]) -> None:
    """Stop the bench when a run did not end as it must, a harness error happened, or processes
    or scratch were left behind: its figures would not measure what they say."""
    problems = [problem for outcome in outcomes for problem in run_problems(store, outcome)]
    for outcome in outcomes:
        if outcome.run is not None:
            problems += [
                f"{attempt.scenario_id}: harness error: {attempt.cause}"
                for attempt in store.attempts(outcome.run.id, include_superseded=True)
                if attempt.failure_kind == "harness_error"
            ]
    leftovers = leftover_processes(soak.agent_script, known)
    problems += [f"zombie: {z}" for z in leftovers.zombies]
    problems += [f"left running: {p}" for p in leftovers.alive]
    problems += [f"scratch left: {path}" for path in leftover_scratch(soak.work_root)]
    if problems:
        shown = "\n".join(problems[:30])
        raise SystemExit(f"{len(problems)} problems; the figures would mean nothing:\n{shown}")


def main() -> None:
    values: dict[str, list[Figures]] = {load: [] for load in LOADS}
    seed = int(os.environ.get("BENCH_SOAK_SEED", random.randrange(2**32)))
    rng = random.Random(seed)
    with (
        tempfile.TemporaryDirectory() as scratch,
        private_schema(PG_URL) as url,
        short_work_root() as work_root,
    ):
        soak = Soak.prepare(Path(scratch), work_root, url)
        store = Store.open(url)
        try:
            # a first run opens (probes) the sandbox, which every later run reuses
            run_load(soak, [RunSpec(("answer-0", "code-0", "tool-0"), 1, 3)], 1)
            for _ in range(REPEATS):
                specs = random_specs(RUNS, rng)
                chaos_seed = rng.randrange(2**32)
                for load in LOADS:
                    chosen = chaos_seed if load == "chaos" else None
                    values[load].append(one_load(soak, store, specs, chosen))
        finally:
            store.close()
    report(values, seed)


def report(values: dict[str, list[Figures]], seed: int) -> None:
    calm, chaos = values["calm"], values["chaos"]
    print(
        f"soak: {RUNS} runs per load ({LANES} at once, -j 1 to 16, bwrap, timeout {TIMEOUT_SEC:g} s), "
        f"{REPEATS} interleaved repetitions of calm and chaos (seed {seed}): median (range)"
    )
    signals: Counter[str] = Counter()
    for figures in chaos:
        signals.update(figures.signals)
    print(f"chaos signals sent, all repetitions: {dict(sorted(signals.items()))}")
    rows: list[tuple[str, list[float], list[float], bool]] = [
        ("wall s", [f.seconds for f in calm], [f.seconds for f in chaos], True),
        ("attempts run", [f.attempts for f in calm], [f.attempts for f in chaos], False),
        ("tries", [f.tries for f in calm], [f.tries for f in chaos], False),
    ]
    for label, share in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)):
        rows.append(
            (
                f"s past the end, {label}",
                [percentile(f.late_sec, share) for f in calm],
                [percentile(f.late_sec, share) for f in chaos],
                True,
            )
        )
    for kind in KINDS:
        rows.append(
            (
                f"  p99, {kind} tries",
                [percentile(f.by_kind.get(kind, [0.0]), 0.99) for f in calm],
                [percentile(f.by_kind.get(kind, [0.0]), 0.99) for f in chaos],
                True,
            )
        )
    rows += [
        (
            "tries not measured: end unknown",
            [f.unknown_end for f in calm],
            [f.unknown_end for f in chaos],
            False,
        ),
        (
            "  a check's sandbox stopped",
            [f.check_stopped for f in calm],
            [f.check_stopped for f in chaos],
            False,
        ),
        (
            "needed the watchdog / attempts",
            [f.watchdog / f.attempts for f in calm],
            [f.watchdog / f.attempts for f in chaos],
            False,
        ),
        (
            f"timeouts > {LATE_SEC:g} s late / attempts",
            [f.late_timeouts / f.attempts for f in calm],
            [f.late_timeouts / f.attempts for f in chaos],
            False,
        ),
    ]
    print(f"{'':34}{'calm':<28}{'chaos':<28}chaos / calm")
    for label, calm_values, chaos_values, ratio in rows:
        compared = spread(ratios(chaos_values, calm_values)) if ratio else ""
        print(f"{label:<34}{spread(calm_values):<28}{spread(chaos_values):<28}{compared}")


if __name__ == "__main__":
    main()
