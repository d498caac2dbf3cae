"""Helpers shared by the bench scripts: trivial benchmarks on disk and timed commands, their CPU
counted in a cgroup where sandboxed processes take part (RUSAGE_CHILDREN cannot see those)."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

BENCHYARD = [sys.executable, "-P", "-m", "benchyard"]  # -P: not bench/queue.py for queue


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


# A floor for the commands that read runs (bench/compare.py, bench/big_runs.py): a bare
# interpreter reading with sqlite3 the columns a run's figures need, of each run named.
OUTCOMES_FLOOR = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1])
for run_id in sys.argv[2:]:
    rows = connection.execute(
        "SELECT scenario_id, epoch, category, verdict, turns, cost_usd, duration_sec "
        "FROM attempts WHERE run_id = ? AND superseded = 0 ORDER BY scenario_id, epoch",
        (run_id,),
    ).fetchall()
    assert rows
"""


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


# --- CPU counted in a cgroup --------------------------------------------------------------------
# RUSAGE_CHILDREN sees only the processes the measured command waited for, all the way down: not
# what runs inside a bwrap sandbox (the namespace's init is not reaped as a child that carries its
# children's CPU). A cgroup counts every process born in it, however deep and whoever reaps it, and
# benchyard's own per-attempt cgroups do not take them out of it (see CpuCounter.discover).

V2_FILE = "cpu.stat"  # usage_usec: user + system microseconds of every process in it, ever
V1_FILE = "cpuacct.usage"  # nanoseconds, the same, in the v1 cpuacct hierarchy


@dataclass(frozen=True)
class Timing:
    """One measured command: wall seconds, its CPU seconds (`cpu`, counted as `counted_by` says)
    and, for comparison, what RUSAGE_CHILDREN saw of it."""

    wall: float
    cpu: float
    rusage_cpu: float
    counted_by: str


class Measuring:
    """One measure in progress: a fresh cgroup (or none) that `enter` moves a process into."""

    def __init__(self, directory: Path | None, version: int) -> None:
        self.directory = directory
        self.version = version
        self.timing: Timing | None = None

    def enter(self) -> None:
        """Move the calling process in: a `preexec_fn`, so the command and all it starts are born
        in the cgroup."""
        if self.directory is not None:
            (self.directory / "cgroup.procs").write_text(str(os.getpid()))

    def usage_sec(self) -> float:
        if self.directory is None:
            return 0.0
        if self.version == 2:
            for line in (self.directory / V2_FILE).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
            raise OSError(f"no usage_usec in {self.directory / V2_FILE}")
        return int((self.directory / V1_FILE).read_text()) / 1e9


class CpuCounter:
    """Counts the CPU of measured commands in cgroups of the bench's own, or says why it cannot;
    `note` says which, and every bench that measures sandboxed work prints it."""

    def __init__(self, parent: Path | None, version: int, note: str) -> None:
        self.parent = parent  # the bench process's own cgroup, where the fresh ones are made
        self.version = version
        self.note = note

    @property
    def counted_by(self) -> str:
        if self.parent is None:
            return "RUSAGE_CHILDREN"
        return "cgroup v2 cpu.stat" if self.version == 2 else "cgroup v1 cpuacct"

    @classmethod
    def discover(cls) -> CpuCounter:
        """A cgroup v2 hierarchy where benchyard does not put its own limits (it needs memory and
        pids enabled below its cgroup, which v2 forbids in a cgroup holding processes, as a fresh
        bench cgroup would), else v1's cpuacct (benchyard's limits use v1's memory and pids
        hierarchies only); the first in which this process can make a cgroup that counts CPU."""
        reasons: list[str] = []
        for version, directory in _candidate_dirs(reasons):
            probe = directory / f"bench-cpu-{os.getpid()}-probe"
            try:
                probe.mkdir()
                Measuring(probe, version).usage_sec()
            except (OSError, ValueError) as error:
                reasons.append(f"cgroup v{version} at {directory}: {error}")
                continue
            finally:
                with contextlib.suppress(OSError):
                    probe.rmdir()
            kind = "cpu.stat usage_usec" if version == 2 else "cpuacct.usage"
            note = (
                f"CPU: counted in a fresh cgroup per measure (cgroup v{version} {kind}, under "
                f"{directory}): every process the measured command starts, sandboxed ones and "
                "those in benchyard's per-attempt cgroups included; RUSAGE_CHILDREN beside it"
            )
            return cls(directory, version, note)
        why = "; ".join(reasons) or "no cgroup hierarchy found"
        note = (
            f"CPU: NOT counted in a cgroup ({why}); the CPU figures are RUSAGE_CHILDREN, which "
            "does not see the processes inside a bwrap sandbox: sandboxed CPU is missing from them"
        )
        return cls(None, 0, note)

    @contextlib.contextmanager
    def measuring(self, this_process: bool = False) -> Iterator[Measuring]:
        """A fresh cgroup for one measure: start its processes with `preexec_fn=m.enter`; when the
        block ends, `m.timing` holds its wall time, its CPU and RUSAGE_CHILDREN's.
        `this_process`: the bench process itself is in the cgroup for the block (and its own CPU
        counted), for a measure that starts many processes itself: moving each one in from a
        preexec_fn costs each spawn a cgroup migration (a kernel lock and an RCU grace period;
        200 bare bwrap spawns took 5.3-6.3 s that way against 3.1-3.8 s)."""
        directory = None
        if self.parent is not None:
            directory = self.parent / f"bench-cpu-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            directory.mkdir()
        measure = Measuring(directory, self.version)
        try:
            if this_process:
                measure.enter()
            rusage_before = _children_cpu()
            started = time.perf_counter()
            try:
                yield measure
            finally:
                if this_process and self.parent is not None:  # back where it was
                    (self.parent / "cgroup.procs").write_text(str(os.getpid()))
            wall = time.perf_counter() - started
            rusage = _children_cpu() - rusage_before
            cpu = measure.usage_sec() if directory is not None else rusage
            measure.timing = Timing(wall, cpu, rusage, self.counted_by)
        finally:
            if directory is not None:
                _remove_cgroup(directory)

    def run(self, argv: list[str], cwd: Path | None = None) -> Timing:
        """One run of `argv` (which must succeed) in a fresh cgroup."""
        with self.measuring() as measure:
            subprocess.run(
                argv, check=True, cwd=cwd, stdout=subprocess.DEVNULL, preexec_fn=measure.enter
            )
        assert measure.timing is not None
        return measure.timing


@functools.cache
def cpu_counter() -> CpuCounter:
    """This bench process's CpuCounter, found once."""
    return CpuCounter.discover()


def timed_in_cgroup(argv: list[str], cwd: Path | None = None) -> Timing:
    """One run of `argv` (which must succeed): wall seconds, CPU seconds counted in a fresh cgroup
    (RUSAGE_CHILDREN, said in `counted_by`, where none can be made) and RUSAGE_CHILDREN's."""
    return cpu_counter().run(argv, cwd)


def cgroup_timed(
    command: list[str], timings: list[Timing], cwd: Path | None = None
) -> Callable[[], float]:
    """A measure like `timed`: one run of `command` in seconds of wall time, its Timing (CPU in
    a cgroup) appended to `timings`."""

    def measure() -> float:
        timing = timed_in_cgroup(command, cwd)
        timings.append(timing)
        return timing.wall

    return measure


def _candidate_dirs(reasons: list[str]) -> Iterator[tuple[int, Path]]:
    """This process's own cgroup directory in each hierarchy that may count CPU, v2 first."""
    own = _own_cgroups()
    found_any = False
    for point, kind, _options, root in _cgroup_mounts():
        if kind == "cgroup2" and "" in own:
            directory = _below(point, root, own[""])
            if directory is None:
                continue
            found_any = True
            controllers = _read(directory / "cgroup.controllers").split()
            if "memory" in controllers and "pids" in controllers:
                reasons.append(
                    f"cgroup v2 at {directory} is where benchyard makes its per-attempt cgroups, "
                    "and a run started in a fresh cgroup could not make them (v2 allows no "
                    "processes in a cgroup whose children have controllers)"
                )
                continue
            if not os.access(directory, os.W_OK):
                reasons.append(f"no write access to cgroup v2 at {directory}")
                continue
            yield 2, directory
    for point, kind, options, root in _cgroup_mounts():
        if kind == "cgroup" and "cpuacct" in options.split(",") and "cpuacct" in own:
            directory = _below(point, root, own["cpuacct"])
            if directory is None:
                continue
            found_any = True
            if not os.access(directory, os.W_OK):
                reasons.append(f"no write access to cgroup v1 cpuacct at {directory}")
                continue
            yield 1, directory
    if not found_any:
        reasons.append("neither a cgroup v2 nor a v1 cpuacct hierarchy holds this process")


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup per v1 controller, and under '' its v2 cgroup."""
    paths: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                paths[controller] = path
    return paths


def _cgroup_mounts() -> Iterator[tuple[Path, str, str, str]]:
    """(mount point, type, super options, root within the hierarchy) of each cgroup mount."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            before, _, after = line.partition(" - ")
            fields, tail = before.split(), after.split()
            if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                yield Path(_unescape(fields[4])), tail[0], tail[2], _unescape(fields[3])


def _below(point: Path, root: str, own: str) -> Path | None:
    try:
        return point / Path(own).relative_to(root)
    except ValueError:
        return None


def _unescape(field: str) -> str:
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n")


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _remove_cgroup(directory: Path) -> None:
    """rmdir, once what the command left inside has died (a sandbox's last processes exit a
    moment after the command returns); what will not die is killed."""
    deadline = time.monotonic() + 5.0
    while True:
        try:
            directory.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline:
                print(f"bench: could not remove the cgroup {directory}", file=sys.stderr)
                return
            for pid in _read(directory / "cgroup.procs").split():
                if int(pid) == os.getpid():
                    print(f"bench: still in the cgroup {directory}", file=sys.stderr)
                    return
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)
            time.sleep(0.01)
