"""Memory of `benchyard run` as runs grow: peak RSS of the whole command at 1,000 and 100,000
trivial attempts of as many DISTINCT scenarios (issue 27's goal: a benchmark's scenarios read
lazily, so that the 100,000-scenario run's peak stays within 1.5x of the 1,000-scenario run's),
and at 1,000 scenarios of 100 epochs (100,000 attempts over fewer scenarios: what the run itself
holds per attempt, apart from the benchmark loaded; issue 16's goal, within 1.2x), with the
in-process oracle, `--sandbox none --allow-unsandboxed -q`, on SQLite. Also the CPU of loading
the largest benchmark alone (`load_benchmark`), per scenario, beyond the floor's.

Each figure is a ratio: to the 1,000-scenario run's peak RSS measured next to it, and to a floor,
the peak RSS of `python -c "import benchyard.cli.app"`. Medians of REPEAT interleaved repetitions
(each measure in turn, so a slow spell falls on all alike), with their spread (min-max).
Peak RSS and CPU are the child's own (os.wait4).
Run: .venv/bin/python bench/memory.py  (BENCH_MEMORY_REPEAT=3; BENCH_MEMORY_SIZES=1000,100000;
BENCH_MEMORY_EPOCHS=100, empty for none)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from common import BENCHYARD, as_installed, interleaved, ratios, spread, trivial_benchmark

REPEAT = int(os.environ.get("BENCH_MEMORY_REPEAT", "3"))
SIZES = tuple(int(n) for n in os.environ.get("BENCH_MEMORY_SIZES", "1000,100000").split(","))
EPOCHS = tuple(int(n) for n in os.environ.get("BENCH_MEMORY_EPOCHS", "100").split(",") if n)
SCENARIOS_GOAL = 1.5  # issue 27: the largest run of distinct scenarios, over the smallest
EPOCHS_GOAL = 1.2  # issue 16: the smallest run's scenarios over many epochs, over it
FLOOR = [sys.executable, "-c", "import benchyard.cli.app"]
LOAD = "from benchyard.benchmarks.loader import load_benchmark; import sys; load_benchmark(sys.argv[1])"


def peak_rss_mib(command: list[str], cpu: list[float] | None = None) -> float:
    """The peak resident memory of `command`'s process, in MiB (its CPU seconds appended to
    `cpu`); a failing command stops the bench."""
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {child.returncode}")
    if cpu is not None:
        cpu.append(usage.ru_utime + usage.ru_stime)
    return usage.ru_maxrss / 1024


def _run(root: Path, scenarios: int, epochs: int) -> Callable[[], float]:
    bench = root / f"bench-{scenarios}"
    if not bench.exists():
        trivial_benchmark(bench, scenarios)
    store = root / "store.db"

    def measure() -> float:
        store.unlink(missing_ok=True)
        return peak_rss_mib(
            [
                *BENCHYARD,
                "run",
                str(bench),
                "--agent",
                "oracle",
                "--db",
                f"sqlite:///{store}",
                "-q",
                "-j",
                "16",
                "--epochs",
                str(epochs),
                "--sandbox",
                "none",
                "--allow-unsandboxed",
            ]
        )

    return measure


def _goals(base: int, largest: int) -> dict[str, float]:
    """Peak RSS goals, as ratios to the smallest run's: issue 27's for distinct scenarios, issue
    16's for epochs."""
    goals = {f"{largest:,} scenarios": SCENARIOS_GOAL}
    goals.update({f"{base:,} scenarios x {epochs} epochs": EPOCHS_GOAL for epochs in EPOCHS})
    return goals


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        as_installed(root)
        base, largest = SIZES[0], SIZES[-1]
        floor_cpu: list[float] = []
        load_cpu: list[float] = []
        measures: dict[str, Callable[[], float]] = {"floor": lambda: peak_rss_mib(FLOOR, floor_cpu)}
        attempts: dict[str, int] = {}
        for size in SIZES:
            attempts[f"{size:,} scenarios"] = size
            measures[f"{size:,} scenarios"] = _run(root, size, 1)
        for epochs in EPOCHS:
            attempts[f"{base:,} scenarios x {epochs} epochs"] = base * epochs
            measures[f"{base:,} scenarios x {epochs} epochs"] = _run(root, base, epochs)
        load = [sys.executable, "-c", LOAD, str(root / f"bench-{largest}")]
        measures[f"load {largest:,} scenarios"] = lambda: peak_rss_mib(load, load_cpu)
        measures[f"{base:,} scenarios"]()  # warm-up: bytecode compiled, as installed
        peaks = interleaved(measures, REPEAT)
    baseline, floor = peaks[f"{base:,} scenarios"], peaks["floor"]
    print(f"{'':34} {'peak RSS MiB':>26} {'x ' + f'{base:,}' + ' scenarios':>26} {'x floor':>26}")
    for name, values in peaks.items():
        print(
            f"{name:34} {spread(values):>26} {spread(ratios(values, baseline)):>26} "
            f"{spread(ratios(values, floor)):>26}"
        )
    for name, goal in _goals(base, largest).items():
        if name in peaks:
            ratio = statistics.median(ratios(peaks[name], baseline))
            verdict = "met" if ratio <= goal else "not met"
            print(
                f"goal: {name} within {goal:g}x the {base:,}-scenario run: x {ratio:.3g}, {verdict}"
            )
    print(f"peak RSS added per attempt beyond the first {base:,} (medians):")
    for name, count in attempts.items():
        if count > base:
            added = (statistics.median(peaks[name]) - statistics.median(baseline)) * 1024
            print(f"  {name:32} {added / (count - base):6.2f} KiB")
    per_scenario = [
        (cpu - idle) / largest * 1000 for cpu, idle in zip(load_cpu, floor_cpu, strict=True)
    ]
    print(f"load CPU per scenario beyond the floor's, ms: {spread(per_scenario)}")


if __name__ == "__main__":
    main()
