"""Storage per attempt: the bytes a store keeps for an attempt whose agent printed 1 KB, 100 KB
and 1 MB, over the bytes printed, and over those bytes compressed alone by zlib (the least a
store that keeps every byte could take).

A command agent prints text like an agent's output (letters, spaces and newlines from a seeded
generator, about 4:3 under zlib) on stdout, which is also its answer; ATTEMPTS attempts of each
size run with `--sandbox none --allow-unsandboxed` into one SQLite store. Stored bytes are the
sizes of the columns that hold outputs (answer, answers, stdout, stderr, trajectory, patch and,
where the schema has it, outputs), summed per attempt: the figure is the same at every run, so
it is measured once.
Run: .venv/bin/python bench/storage.py
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

from common import BENCHYARD, trivial_benchmark

SIZES = (1_000, 100_000, 1_000_000)
ATTEMPTS = 5
UNSANDBOXED = ("--sandbox", "none", "--allow-unsandboxed")
COLUMNS = ("answer", "answers", "stdout", "stderr", "trajectory", "patch", "outputs")
AGENT = """import random, string, sys
chosen = random.Random(int(sys.argv[1]))
sys.stdout.write("".join(chosen.choice(string.ascii_letters + " \\n") for _ in range(int(sys.argv[1]))))
"""


def printed(size: int) -> bytes:
    """What the agent prints for `size` (the same generator, run here)."""
    return subprocess.run(
        [sys.executable, "-c", AGENT, str(size)], check=True, capture_output=True
    ).stdout


def stored_per_attempt(store: Path) -> float:
    with sqlite3.connect(store) as connection:
        present = {row[1] for row in connection.execute("PRAGMA table_info(attempts)")}
        sizes = " + ".join(f"coalesce(length({c}), 0)" for c in COLUMNS if c in present)
        total, count = connection.execute(f"SELECT sum({sizes}), count(*) FROM attempts").fetchone()
    per_attempt: float = total / count
    return per_attempt


def measure(root: Path, size: int) -> float:
    bench = trivial_benchmark(root / f"bench-{size}", ATTEMPTS)
    agent = root / "agent.py"
    agent.write_text(AGENT, encoding="utf-8")
    store = root / f"store-{size}.db"
    command = f"{sys.executable} {agent} {size}"
    db = f"sqlite:///{store}"
    run = [*BENCHYARD, "run", str(bench), "--agent-cmd", command, "--db", db, "-q"]
    subprocess.run([*run, *UNSANDBOXED], check=True, stdout=subprocess.DEVNULL)
    return stored_per_attempt(store)


def main() -> None:
    print(f"{'output':>10} {'stored/attempt':>15} {'x output':>9} {'x zlib(output)':>15}")
    with tempfile.TemporaryDirectory() as scratch:
        for size in SIZES:
            output = printed(size)
            stored = measure(Path(scratch), size)
            alone = len(zlib.compress(output, 6))
            print(
                f"{len(output):>10,} {stored:>15,.0f} {stored / len(output):>9.3f} "
                f"{stored / alone:>15.3f}"
            )


if __name__ == "__main__":
    main()
