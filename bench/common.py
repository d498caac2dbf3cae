"""Helpers shared by the bench scripts: trivial benchmarks on disk and timed commands."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
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
