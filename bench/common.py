"""Helpers shared by the bench scripts: trivial benchmarks on disk and timed commands."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

BENCHYARD = [sys.executable, "-m", "benchyard"]


def trivial_benchmark(root: Path, count: int, name: str = "trivial") -> Path:
    """`count` one-turn scenarios whose reference passes an `equals` check, in one JSONL file."""
    (root / "scenarios").mkdir(parents=True, exist_ok=True)
    (root / "benchmark.yaml").write_text(f"name: {name}\nversion: '1'\n", encoding="utf-8")
    with (root / "scenarios" / "all.jsonl").open("w", encoding="utf-8") as out:
        for i in range(count):
            record = {
                "id": f"s{i:05d}",
                "category": f"c{i % 5}",
                "stimulus": f"say {i}",
                "checks": [{"type": "equals", "value": str(i)}],
                "reference": str(i),
            }
            out.write(json.dumps(record) + "\n")
    return root


def wall_time(command: list[str], repeat: int = 1, cwd: Path | None = None) -> float:
    """Median wall-clock seconds of `command` over `repeat` runs; a failing command stops the bench."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, check=True, cwd=cwd, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def as_installed(scratch: Path) -> None:
    """Start benchyard's commands (they inherit this environment) as an installed package starts:
    its bytecode compiled once, into `scratch`/pycache, whatever PYTHONDONTWRITEBYTECODE says;
    the caller runs each command once, unmeasured, to compile it."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")


def timed(command: list[str], cpu: list[float], cwd: Path | None = None) -> Callable[[], float]:
    """A measure: one run of `command` (which must succeed), in seconds of wall time; the CPU
    seconds it took (user and system, which a busy machine disturbs less) are appended to `cpu`."""

    def measure() -> float:
        before = _children_cpu()
        started = time.perf_counter()
        subprocess.run(command, check=True, cwd=cwd, stdout=subprocess.DEVNULL)
        elapsed = time.perf_counter() - started
        cpu.append(_children_cpu() - before)
        return elapsed

    return measure


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def spread(values: list[float]) -> str:
    """The median of `values` with their range, e.g. '1.21 (1.18-1.30, n=5)'."""
    return f"{statistics.median(values):.3g} ({min(values):.3g}-{max(values):.3g}, n={len(values)})"


def interleaved(
    measures: dict[str, Callable[[], float]], repeats: int = 5
) -> dict[str, list[float]]:
    """Each measure taken `repeats` times, in turn (a, b, c, a, b, c, ...), so that a machine's
    slow spell falls on every one of them alike; the values of each, in order."""
    values: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(repeats):
        for name, measure in measures.items():
            values[name].append(measure())
    return values


def ratios(values: list[float], floors: list[float]) -> list[float]:
    """Each repetition's value over the floor measured next to it."""
    return [value / floor for value, floor in zip(values, floors, strict=True)]
