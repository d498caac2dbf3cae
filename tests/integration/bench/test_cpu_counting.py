"""The benches' CPU figures see sandboxed work (issue 27, item 5): bench/common.py counts each
measured command's CPU in a fresh cgroup, which holds every process the command starts, those
inside a bwrap sandbox included, where RUSAGE_CHILDREN sees almost nothing of them. Where no cgroup
can be made, the counter says so and falls back, never silently."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"
BURN_SEC = 0.5
# inside the sandbox: the system's interpreter (a checkout under /tmp, its venv included, is
# hidden by the sandbox's own /tmp)
SYSTEM_PYTHON = "/usr/bin/python3"
BUSY = (
    "import time\n"
    "t = time.process_time()\n"
    f"while time.process_time() - t < {BURN_SEC}:\n"
    "    pass\n"
    "print(0)\n"
)
BARE_BWRAP = [
    *("bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/", "/"),
    *("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"),
]


def _common() -> ModuleType:
    """bench/common.py, loaded by its path (bench/ on sys.path would shadow the standard queue)."""
    spec = importlib.util.spec_from_file_location("bench_common", BENCH / "common.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


common = _common()


@pytest.fixture
def counter() -> Any:
    found = common.CpuCounter.discover()
    if found.parent is None:
        pytest.skip(found.note)
    return found


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_the_cgroup_counts_cpu_burnt_inside_a_bwrap_sandbox(counter: Any) -> None:
    timing = counter.run([*BARE_BWRAP, SYSTEM_PYTHON, "-I", "-S", "-c", BUSY])

    assert timing.counted_by.startswith("cgroup")
    assert timing.cpu >= 0.6 * BURN_SEC
    # the sandboxed process's CPU never reaches RUSAGE_CHILDREN: only bwrap's own is there
    assert timing.rusage_cpu < 0.2 * BURN_SEC


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_a_benchyard_run_in_bwrap_has_its_agent_s_cpu_counted(counter: Any, tmp_path: Path) -> None:
    """The agent runs in benchyard's per-attempt cgroup, inside a bwrap sandbox: its CPU is in the
    measured run's cgroup, and not in RUSAGE_CHILDREN (which holds benchyard's own)."""
    bench = common.trivial_benchmark(tmp_path / "bench", 1)
    agent = f"/usr/bin/python3 -I -S -c '{BUSY}'"
    run = [*common.BENCHYARD, "run", str(bench), "--agent-cmd", agent, "--sandbox", "bwrap"]
    run += ["--db", f"sqlite:///{tmp_path / 'store.db'}", "-q"]  # the agent prints 0: passed

    timing = counter.run(run)

    db = f"sqlite:///{tmp_path / 'store.db'}"
    report = [*common.BENCHYARD, "report", "latest", "--format", "json", "--db", db]
    shown = subprocess.run(report, capture_output=True, text=True, check=True)
    assert json.loads(shown.stdout)["summary"]["passed"] == 1
    assert timing.cpu - timing.rusage_cpu >= 0.6 * BURN_SEC


def test_without_a_cgroup_it_says_so_and_counts_rusage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(common, "_cgroup_mounts", lambda: iter(()))

    counter = common.CpuCounter.discover()
    timing = counter.run([sys.executable, "-c", BUSY])

    assert counter.parent is None
    assert "NOT counted in a cgroup" in counter.note
    assert "RUSAGE_CHILDREN" in counter.note
    assert timing.counted_by == "RUSAGE_CHILDREN"
    assert timing.cpu == timing.rusage_cpu >= 0.6 * BURN_SEC


def test_a_v2_hierarchy_where_benchyard_puts_its_limits_is_not_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Pure cgroup v2: a run started in a fresh cgroup could not make its per-attempt cgroups
    below it (no processes in a cgroup whose children have controllers), so the bench says so."""
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    monkeypatch.setattr(common, "_cgroup_mounts", lambda: iter([(tmp_path, "cgroup2", "rw", "/")]))
    monkeypatch.setattr(common, "_own_cgroups", lambda: {"": "/"})

    counter = common.CpuCounter.discover()

    assert counter.parent is None
    assert "where benchyard makes its per-attempt cgroups" in counter.note


def test_a_measure_of_this_process_counts_it_and_puts_it_back(counter: Any) -> None:
    """The floors spawn their bwrap sandboxes from the bench process itself, inside the cgroup."""
    before = Path("/proc/self/cgroup").read_text()

    with counter.measuring(this_process=True) as measuring:
        inside = Path("/proc/self/cgroup").read_text()
        subprocess.run([*BARE_BWRAP, SYSTEM_PYTHON, "-I", "-S", "-c", BUSY], check=True)

    assert inside != before
    assert Path("/proc/self/cgroup").read_text() == before
    assert measuring.timing.cpu >= 0.6 * BURN_SEC
    assert not measuring.directory.exists()
