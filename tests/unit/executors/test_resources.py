"""What attempts ask of a Ray cluster, and the gate that keeps no more in flight than it can run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchyard.benchmarks.loader import load_benchmark
from benchyard.executors.ray import resources
from benchyard.executors.ray.resources import Ask, Gate, ask_for, fits_somewhere, slots
from benchyard.spec.problems import BenchmarkInvalid
from tests.support import scenario, write_benchmark


def test_attempts_ask_for_what_their_limits_declare(tmp_path: Path) -> None:
    bench = load_benchmark(
        str(
            write_benchmark(
                tmp_path / "b",
                [
                    scenario("plain", "x"),
                    scenario("big", "x", limits={"cpus": 2, "memory_mb": 512}),
                    scenario("gpu", "x", limits={"resources": {"gpu": 1, "docker": 0.5}}),
                ],
                defaults={"resources": {"docker": 1}, "memory_mb": 256},
            )
        )
    )
    asks = {s.id: ask_for(bench, s) for s in bench.scenarios}
    mb = 2**20
    assert asks["plain"].as_dict() == {"CPU": 1.0, "memory": 256 * mb, "docker": 1.0}
    assert asks["big"].as_dict() == {"CPU": 2.0, "memory": 512 * mb, "docker": 1.0}
    assert asks["gpu"].as_dict() == {"CPU": 1.0, "memory": 256 * mb, "GPU": 1.0, "docker": 0.5}
    assert asks["gpu"].ray_options() == {
        "num_cpus": 1.0,
        "num_gpus": 1.0,
        "memory": 256.0 * mb,
        "resources": {"docker": 0.5},
    }
    assert asks["gpu"].describe() == "CPU 1, GPU 1, docker 0.5, memory 256 MB"
    nodes = [{"CPU": 4.0, "memory": 1e12, "docker": 2.0}, {"CPU": 1.0, "memory": 1e12}]
    assert fits_somewhere(asks["big"], nodes) and not fits_somewhere(asks["gpu"], nodes)
    assert slots({"CPU": 4.0, "memory": 1e12, "docker": 3.0}, asks["plain"]) == 3


def test_a_resource_name_or_amount_that_makes_no_sense_is_a_problem_with_its_line(
    tmp_path: Path,
) -> None:
    bad = write_benchmark(tmp_path / "b", [scenario("a", "x", limits={"resources": {"-x": 0}})])
    with pytest.raises(BenchmarkInvalid) as caught:
        load_benchmark(str(bad))
    assert "limits.resources" in str(caught.value)


async def test_the_gate_admits_what_the_live_cluster_can_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(resources, "REFRESH_SEC", 0.05)
    totals = {"CPU": 2.0}
    gate = Gate(lambda: totals)
    one = Ask.of({"CPU": 1.0})
    entered: list[int] = []
    release = asyncio.Event()

    async def attempt(number: int) -> None:
        async with gate.held(one):
            entered.append(number)
            await release.wait()

    tasks = [asyncio.create_task(attempt(n)) for n in range(3)]
    await asyncio.sleep(0.2)
    assert entered == [0, 1] and gate.in_flight == 2  # the third waits in the worker
    totals["CPU"] = 3.0  # a node joined
    await asyncio.sleep(0.2)
    assert entered == [0, 1, 2]
    release.set()
    await asyncio.gather(*tasks)
    assert gate.in_flight == 0 and gate.used["CPU"] == 0
    totals["CPU"] = 0.0  # every node lost: nothing starts until one is back
    waiting = asyncio.create_task(attempt(3))
    await asyncio.sleep(0.2)
    assert entered == [0, 1, 2]
    totals["CPU"] = 1.0
    await asyncio.wait_for(waiting, 2)
    assert entered == [0, 1, 2, 3]
