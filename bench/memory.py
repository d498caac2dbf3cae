"""Memory of `benchyard run` as runs grow: peak RSS of the whole command at 1,000, 10,000 and
30,000 trivial attempts (as many scenarios), and at 1,000 scenarios of 10 and 100 epochs (10,000
and 100,000 attempts over fewer scenarios: what the run itself holds per attempt, apart from the
benchmark loaded; issue 16's goal is the 100,000-attempt run within 1.2x of the 1,000-attempt
one), with the in-process oracle, `--sandbox none --allow-unsandboxed -q`, on SQLite.

Each figure is a ratio: to the 1,000-attempt run's peak RSS measured next to it, and to a floor,
the peak RSS of `python -c "import benchyard.cli.app"`. Medians of REPEAT interleaved repetitions
(each measure in turn, so a slow spell falls on all alike), with their spread (min-max).
Peak RSS is the child's own ru_maxrss (os.wait4).
Run: .venv/bin/python bench/memory.py  (BENCH_MEMORY_REPEAT=5; BENCH_MEMORY_SIZES=1000,10000,30000)
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

REPEAT = int(os.environ.get("BENCH_MEMORY_REPEAT", "5"))
SIZES = tuple(int(n) for n in os.environ.get("BENCH_MEMORY_SIZES", "1000,10000,30000").split(","))
EPOCHS = (10, 100)  # over the first size's scenarios
FLOOR = [sys.executable, "-c", "import benchyard.cli.app"]


def peak_rss_mib(command: list[str]) -> float:
    """The peak resident memory of `command`'s process, in MiB; a failing command stops the bench."""
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {child.returncode}")
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


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        as_installed(root)
        base = SIZES[0]
        measures: dict[str, Callable[[], float]] = {"floor": lambda: peak_rss_mib(FLOOR)}
        attempts: dict[str, int] = {}
        for size in SIZES:
            attempts[f"{size:,} attempts"] = size
            measures[f"{size:,} attempts"] = _run(root, size, 1)
        for epochs in EPOCHS:
            attempts[f"{base:,} scenarios x {epochs} epochs"] = base * epochs
            measures[f"{base:,} scenarios x {epochs} epochs"] = _run(root, base, epochs)
        measures[f"{base:,} attempts"]()  # warm-up: bytecode compiled, as installed
        peaks = interleaved(measures, REPEAT)
    baseline, floor = peaks[f"{base:,} attempts"], peaks["floor"]
    print(f"{'':34} {'peak RSS MiB':>26} {'x ' + f'{base:,}' + ' attempts':>26} {'x floor':>26}")
    for name, values in peaks.items():
        print(
            f"{name:34} {spread(values):>26} {spread(ratios(values, baseline)):>26} "
            f"{spread(ratios(values, floor)):>26}"
        )
    print(f"peak RSS added per attempt beyond the first {base:,} (medians):")
    for name, count in attempts.items():
        if count > base:
            added = (statistics.median(peaks[name]) - statistics.median(baseline)) * 1024
            print(f"  {name:32} {added / (count - base):6.2f} KiB")


if __name__ == "__main__":
    main()
