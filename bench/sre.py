"""The SRE benchmark's figures: ITBench's 67 scenarios imported and verified, the simulator's
speed, and three agents on sre-starter and on the ITBench incidents: the oracle (the ground
truth, 100% by construction), the naive baseline that names the most alerting service
(examples/agents/sre_baseline.py) and the scripted reference agent (examples/agents/sre_agent.py).

Reads the ITBench checkout at ITBENCH (default /work/shared/datasets/itbench: the dataset's
`sre/` directory of `scenario_<N>/`); the project's tests never do.
Run: .venv/bin/python bench/sre.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import BENCHYARD

ROOT = Path(__file__).resolve().parent.parent
ITBENCH = Path(os.environ.get("ITBENCH", "/work/shared/datasets/itbench"))
AGENTS = {
    "oracle": ["--agent", "oracle"],
    "baseline (most alerting service)": [
        "--agent-cmd",
        f"python3 {ROOT / 'examples/agents/sre_baseline.py'}",
    ],
    "scripted reference agent": ["--agent-cmd", f"python3 {ROOT / 'examples/agents/sre_agent.py'}"],
}


def benchyard(*args: str, cwd: Path) -> str:
    done = subprocess.run([*BENCHYARD, *args], cwd=cwd, capture_output=True, text=True, timeout=900)
    if done.returncode not in (0, 1):
        sys.exit(
            f"benchyard {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}"
        )
    return done.stdout + done.stderr


def world_build_ms(benchmark: Path) -> float:
    from benchyard.benchmarks.loader import load_benchmark
    from benchyard.sre.incident import IncidentSpec
    from benchyard.sre.world import _build_cached

    specs = [
        IncidentSpec.model_validate(s.environment.params).model_dump_json()
        for s in load_benchmark(benchmark).scenarios
        if s.environment is not None
    ]
    started = time.perf_counter()
    for spec in specs:
        _build_cached.__wrapped__(spec)
    return (time.perf_counter() - started) * 1000 / len(specs)


def figures(work: Path, benchmark: str, name: str, args: list[str]) -> dict[str, object]:
    db = f"sqlite:///{work / 'store.db'}"
    benchyard("run", benchmark, *args, "-j", "4", "-q", "--db", db, cwd=work)
    audit = json.loads(
        benchyard("report", "latest", "--format", "audit", "--db", db, cwd=work).split("\nwrote")[0]
    )
    root = audit["root_cause"] or {}
    return {
        "agent": name,
        "accuracy": audit["accuracy"],
        "accuracy_ci95": [
            round(audit["accuracy_ci95"]["low"], 3),
            round(audit["accuracy_ci95"]["high"], 3),
        ],
        "accuracy_lenient": audit.get("accuracy_lenient"),  # beside the strict accuracy
        "false_positive_rate": audit["false_positive_rate"],
        "precision": root.get("precision"),
        "recall": root.get("recall"),
        "avg_turns": audit["avg_turns"],
        "task_count": audit["task_count"],
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        imported = work / "itbench-sre"
        print(
            benchyard("import", "itbench", str(ITBENCH), "-o", str(imported), cwd=work)
            .strip()
            .splitlines()[0]
        )
        for target in (str(imported), "sre-starter"):
            started = time.perf_counter()
            line = benchyard("verify", target, cwd=work).strip().splitlines()[-1]
            print(f"verify {target}: {line} ({time.perf_counter() - started:.1f} s)", flush=True)
        print(f"world build: {world_build_ms(imported):.1f} ms per ITBench incident (uncached)")
        for target in ("sre-starter", str(imported)):
            label = "sre-starter" if target == "sre-starter" else "itbench (67)"
            for name, args in AGENTS.items():
                print(label, json.dumps(figures(work, target, name, args)), flush=True)


if __name__ == "__main__":
    main()
