"""`verify` grades a benchmark's scenarios at once, up to its concurrency (`-j`; by default the
CPUs it may use), as a run grades its attempts; its outcomes still come in the benchmark's order."""

from __future__ import annotations

from pathlib import Path

from benchyard.benchmarks.loader import load_benchmark
from benchyard.runner.api import verify_benchmark
from tests.support import scenario, write_benchmark

# A derive program that leaves its mark in MEET and waits (up to a minute) for the other's: it
# prints 2 only when the other program runs at the same time.
MEETING = """import os, time
meet = {meet!r}
open(os.path.join(meet, {me!r}), "w").close()
deadline = time.monotonic() + 60
while len(os.listdir(meet)) < 2 and time.monotonic() < deadline:
    time.sleep(0.05)
print(len(os.listdir(meet)))
"""


def test_scenarios_are_verified_at_once_and_listed_in_order(tmp_path: Path) -> None:
    meet = tmp_path / "meet"
    meet.mkdir()
    meeting = [
        scenario(
            name,
            "2",
            derive={"python": MEETING.format(meet=str(meet), me=name), "timeout_sec": 120},
        )
        for name in ("left", "right")
    ]
    broken = {**scenario("broken", "3"), "checks": [{"type": "equals", "value": "4"}]}
    bench = write_benchmark(tmp_path / "bench", [broken, *meeting, scenario("plain", "5")])

    outcomes = verify_benchmark(load_benchmark(str(bench)), "none", concurrency=4)

    assert [(o.scenario_id, o.ok) for o in outcomes] == [
        ("broken", False),
        ("left", True),
        ("right", True),
        ("plain", True),
    ]
    assert [o.derived for o in outcomes] == [False, True, True, False]
    assert sorted(p.name for p in meet.iterdir()) == ["left", "right"]
