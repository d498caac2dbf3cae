"""Sandbox overhead: 200 trivial attempts in the bwrap sandbox against the floor, 200 bare bwrap
spawns of the same command, both at the same concurrency, interleaved over 5 repetitions.

A trivial attempt is a command agent that runs a light `python3 -I -S -c` (no site, no .pth
files) to print its answer: one sandboxed Python start-up per attempt, plus everything benchyard
does around it (workdir, protocol files, per-attempt cgroup, grading, store writes) and the run's
own start-up. The floor runs the very same `/bin/sh -c` command line in a bare `bwrap` (the whole
host bound at once), so that any difference is benchyard's own work, not a heavier interpreter.
`--sandbox none` is measured beside them.

Every measure runs in a fresh cgroup of the bench's own (bench/common.py: CpuCounter), so that its
CPU counts every process it started, those inside the bwrap sandboxes and in benchyard's
per-attempt cgroups included: RUSAGE_CHILDREN sees none of them (printed beside it). Where no
cgroup can be made, the first line says so and the CPU figures are RUSAGE_CHILDREN's.

Prints, per measure, the median wall time and CPU with their ranges, the median ratios to the
floor measured next to it (wall and CPU), and the harness's overhead per attempt: (run - floor) /
attempts, in ms of wall time at this concurrency and of CPU; then issue 27 item 4's figures for
bwrap: the whole run over the floor, and the run with its start-up taken off (a run of 1 attempt:
imports, store, the sandbox's checks, one attempt) over the floor, which leaves the per-attempt
work; wall and CPU, each repetition over the floor measured next to it.
benchyard's bytecode is compiled once, into a scratch PYTHONPYCACHEPREFIX, as an installed package
has it (whatever PYTHONDONTWRITEBYTECODE says).

HumanEval (when shared/datasets/humaneval is there): the first BENCH_SANDBOX_HUMANEVAL problems'
canonical solutions graded by `benchyard run` (the oracle agent, --sandbox bwrap) against the
floor, HumanEval's official evaluator (bench/official_humaneval.py: a Manager and a forked process
per problem), at the same concurrency, interleaved, each in a fresh cgroup; printed as CPU per
problem and as ratios: whole runs, and each less its run of 1 problem (its start-up).
Run: .venv/bin/python bench/sandbox.py (BENCH_SANDBOX_ATTEMPTS, BENCH_SANDBOX_REPEAT,
BENCH_SANDBOX_HUMANEVAL: a quicker look; 0 problems leaves HumanEval out)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from common import (
    BENCHYARD,
    Timing,
    as_installed,
    cpu_counter,
    interleaved,
    ratios,
    spread,
    trivial_benchmark,
    wall_time,
)

ATTEMPTS = int(os.environ.get("BENCH_SANDBOX_ATTEMPTS", "200"))
CONCURRENCY = 8
REPEATS = int(os.environ.get("BENCH_SANDBOX_REPEAT", "5"))
# The system's interpreter without site: a venv's or pyenv's .pth files cost ~50 ms per start.
AGENT = (
    "/usr/bin/python3 -I -S -c \"import os; print(int(os.environ['BENCHYARD_SCENARIO_ID'][1:]))\""
)
BARE_BWRAP = [
    *("bwrap", "--unshare-all", "--unshare-user", "--uid", "1000", "--gid", "1000"),
    *("--die-with-parent", "--new-session", "--ro-bind", "/", "/"),
    *("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"),
]
FLOOR_ENV = {"PATH": "/usr/bin:/bin", "BENCHYARD_SCENARIO_ID": "s00001"}
HUMANEVAL_PROBLEMS = int(os.environ.get("BENCH_SANDBOX_HUMANEVAL", "164"))
# Issue 27 item 4's goals, on the CPU of runs less their start-up (a run of 1): trivial attempts
# in bwrap against bare bwrap, and HumanEval graded in bwrap against the official evaluator.
TRIVIAL_GOAL = 1.4
HUMANEVAL_GOAL = 1.5
HUMANEVAL = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "humaneval"
OFFICIAL = Path(__file__).resolve().parent / "official_humaneval.py"


async def spawn_all(argv: list[str], count: int, concurrency: int) -> None:
    """Start `argv` `count` times, `concurrency` at once; a failed one stops the bench."""
    limit = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with limit:
            process = await asyncio.create_subprocess_exec(
                *argv, env=FLOOR_ENV, stdout=subprocess.PIPE
            )
            await process.communicate()
            if process.returncode != 0:
                raise SystemExit(f"the floor's spawn failed: {argv}")

    await asyncio.gather(*(one() for _ in range(count)))


def floor_sec(timings: list[Timing]) -> Callable[[], float]:
    """A measure: ATTEMPTS bare bwrap spawns of the agent's command, CONCURRENCY at once, in one
    fresh cgroup with the bench process that spawns them (as a run holds benchyard's own work);
    its wall seconds, its Timing appended to `timings`."""

    def measure() -> float:
        with cpu_counter().measuring(this_process=True) as measuring:
            argv = [*BARE_BWRAP, "/bin/sh", "-c", AGENT]
            asyncio.run(spawn_all(argv, ATTEMPTS, CONCURRENCY))
        assert measuring.timing is not None
        timings.append(measuring.timing)
        return measuring.timing.wall

    return measure


def benchyard_run(
    run: list[str], db: str, timings: list[Timing], attempts: int = ATTEMPTS
) -> Callable[[], float]:
    """A measure: the whole `run` command (in a fresh cgroup), refused unless every one of its
    `attempts` passed; its wall seconds, its Timing appended to `timings`."""

    def measure() -> float:
        timing = cpu_counter().run(run)
        report = subprocess.run(
            [*BENCHYARD, "report", "latest", "--format", "json", "--db", db],
            capture_output=True,
            text=True,
            check=True,
        )
        passed = json.loads(report.stdout)["summary"]["passed"]
        if passed != attempts:
            raise SystemExit(
                f"only {passed} of {attempts} attempts passed: the figures mean nothing"
            )
        timings.append(timing)
        return timing.wall

    return measure


def official_run(problems: int, timings: list[Timing]) -> Callable[[], float]:
    """A measure: HumanEval's official evaluator on the first `problems` canonical solutions."""
    source = HUMANEVAL / "HumanEval.jsonl.gz"
    argv = [sys.executable, "-P", str(OFFICIAL), str(source), str(problems), str(CONCURRENCY)]

    def measure() -> float:
        timing = cpu_counter().run(argv)
        timings.append(timing)
        return timing.wall

    return measure


def humaneval(root: Path) -> dict[str, list[Timing]]:
    """benchyard's HumanEval grading against the official evaluator (see the module's doc)."""
    timings: dict[str, list[Timing]] = {name: [] for name in HUMANEVAL_MEASURES}
    bench = root / "humaneval"
    bench.mkdir()
    (bench / "benchmark.yaml").write_text(
        "name: humaneval\nversion: '1'\nformat: humaneval\n"
        f"source: {HUMANEVAL / 'HumanEval.jsonl.gz'}\n",
        encoding="utf-8",
    )
    db = f"sqlite:///{root / 'humaneval.db'}"
    run = [*BENCHYARD, "run", str(bench), "--agent", "oracle", "--db", db, "-q"]
    run += ["-j", str(CONCURRENCY), "--sandbox", "bwrap"]
    wall_time([*run, "--limit", "1"])  # create the store and warm the file cache
    problems = HUMANEVAL_PROBLEMS
    interleaved(
        {
            "official": official_run(problems, timings["official"]),
            "official-1": official_run(1, timings["official-1"]),
            "benchyard": benchyard_run(
                [*run, "--limit", str(problems)], db, timings["benchyard"], problems
            ),
            "benchyard-1": benchyard_run([*run, "--limit", "1"], db, timings["benchyard-1"], 1),
        },
        REPEATS,
    )
    return timings


HUMANEVAL_MEASURES = ("official", "official-1", "benchyard", "benchyard-1")


def report_humaneval(timings: dict[str, list[Timing]]) -> None:
    cpu = {name: [t.cpu for t in values] for name, values in timings.items()}
    problems = HUMANEVAL_PROBLEMS
    print(
        f"HumanEval, first {problems} problems' canonical solutions, concurrency {CONCURRENCY}, "
        "CPU per problem (median, range):"
    )
    marginal = {
        name: [
            (run - one) / max(problems - 1, 1) * 1000
            for run, one in zip(cpu[name], cpu[f"{name}-1"], strict=True)
        ]
        for name in ("official", "benchyard")
    }
    for name, label in (
        ("official", "official evaluator (floor)"),
        ("benchyard", "benchyard run, oracle, bwrap"),
    ):
        whole = [value / problems * 1000 for value in cpu[name]]
        print(
            f"  {label:<29} whole run {spread(whole)} ms, less its run of 1 "
            f"{spread(marginal[name])} ms"
        )
    less_start_up = ratios(marginal["benchyard"], marginal["official"])
    print(
        f"issue 27 item 4, HumanEval over the official evaluator's CPU (goal <= {HUMANEVAL_GOAL:g}"
        f" less start-up): whole runs x {spread(ratios(cpu['benchyard'], cpu['official']))}, "
        f"less start-up x {spread(less_start_up)}: "
        f"{_verdict(statistics.median(less_start_up), HUMANEVAL_GOAL)}"
    )


def main() -> None:
    counter = cpu_counter()
    timings: dict[str, list[Timing]] = {name: [] for name in MEASURES}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        as_installed(root)  # bytecode compiled in the warm-up run, not at every start
        bench = trivial_benchmark(root / "bench", ATTEMPTS)
        db = f"sqlite:///{root / 'store.db'}"
        run = [*BENCHYARD, "run", str(bench), "--agent-cmd", AGENT, "--db", db, "-q"]
        run += ["-j", str(CONCURRENCY)]
        wall_time([*run, "--limit", "1"])  # create the store and warm the file cache
        bwrap = [*run, "--sandbox", "bwrap"]
        interleaved(
            {
                "floor": floor_sec(timings["floor"]),
                "bwrap": benchyard_run(bwrap, db, timings["bwrap"]),
                "start-up": benchyard_run([*bwrap, "--limit", "1"], db, timings["start-up"], 1),
                "none": benchyard_run(
                    [*run, "--sandbox", "none", "--allow-unsandboxed"], db, timings["none"]
                ),
            },
            REPEATS,
        )
        graded = HUMANEVAL_PROBLEMS > 0 and (HUMANEVAL / "HumanEval.jsonl.gz").exists()
        humaneval_timings = humaneval(root) if graded else None
    report(counter.note, timings)
    if humaneval_timings is not None:
        report_humaneval(humaneval_timings)
    elif HUMANEVAL_PROBLEMS > 0:
        print(f"HumanEval left out: no {HUMANEVAL / 'HumanEval.jsonl.gz'}")


MEASURES = ("floor", "bwrap", "start-up", "none")


def report(note: str, timings: dict[str, list[Timing]]) -> None:
    wall = {name: [t.wall for t in values] for name, values in timings.items()}
    cpu = {name: [t.cpu for t in values] for name, values in timings.items()}
    print(f"{ATTEMPTS} attempts at concurrency {CONCURRENCY}, {REPEATS} interleaved repetitions")
    print(f"agent and floor command: {AGENT}")
    print(note)
    print("median (range, n); ratios: each repetition over the floor measured next to it")
    for name, label in (
        ("floor", "floor: bare bwrap + the command"),
        ("bwrap", "benchyard run, --sandbox bwrap"),
        ("none", "benchyard run, --sandbox none"),
        ("start-up", "start-up: a run of 1 in bwrap"),
    ):
        rusage = statistics.median(t.rusage_cpu for t in timings[name])
        print(
            f"{label:<33} wall s {spread(wall[name]):<26} CPU s {spread(cpu[name]):<26} "
            f"(RUSAGE_CHILDREN saw {rusage:.3g})"
        )
    print("issue 27 item 4, as ratios to the bare-bwrap floor:")
    without = {
        kind: [run - up for run, up in zip(values["bwrap"], values["start-up"], strict=True)]
        for kind, values in (("wall", wall), ("CPU", cpu))
    }
    rows = (
        ("benchyard run, bwrap, whole", wall["bwrap"], cpu["bwrap"]),
        ("benchyard run, bwrap, less start-up", without["wall"], without["CPU"]),
        ("benchyard run, none, whole", wall["none"], cpu["none"]),
    )
    for label, wall_values, cpu_values in rows:
        print(
            f"  {label:<37} wall x {spread(ratios(wall_values, wall['floor'])):<24} "
            f"CPU x {spread(ratios(cpu_values, cpu['floor'])):<24} "
            f"overhead {_overhead_ms(wall_values, wall['floor']):+.1f} ms wall, "
            f"{_overhead_ms(cpu_values, cpu['floor']):+.1f} ms CPU per attempt"
        )
    print(
        f"bwrap over none: wall x {spread(ratios(wall['bwrap'], wall['none']))}, "
        f"CPU x {spread(ratios(cpu['bwrap'], cpu['none']))}"
    )
    less_start_up = statistics.median(ratios(without["CPU"], cpu["floor"]))
    print(
        f"goal (issue 27 item 4): a bwrap run's CPU less start-up <= {TRIVIAL_GOAL:g}x the floor; "
        f"median x {less_start_up:.3g}: {_verdict(less_start_up, TRIVIAL_GOAL)}"
    )


def _verdict(value: float, goal: float) -> str:
    return "met" if value <= goal else "not met"


def _overhead_ms(values: list[float], floors: list[float]) -> float:
    """The median of each repetition's (run - floor) per attempt, in ms (of wall time or CPU)."""
    return statistics.median(
        (value - floor) / ATTEMPTS * 1000 for value, floor in zip(values, floors, strict=True)
    )


if __name__ == "__main__":
    main()
