"""A mixed load for soaking benchyard, shared by tests/integration/soak/test_soak.py and
bench/soak.py: many short runs through the library API (each recorded and executed as
`runner.api.execute` does for `benchyard run`), several at once in one event loop, of tool-server,
coding and plain-answer scenarios in the bwrap sandbox, while `Chaos` sends SIGKILL and SIGSTOP to
agents and sandboxes in flight; and what must hold of every run afterwards (`run_problems`,
`leftover_processes`, `leftover_scratch`)."""

from __future__ import annotations

import _thread
import asyncio
import contextlib
import io
import os
import random
import re
import signal
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from benchyard.agents.base import Agent
from benchyard.agents.registry import build_agent
from benchyard.benchmarks.loader import load_benchmark
from benchyard.executors.local import LocalExecutor
from benchyard.runner.api import recorded_run
from benchyard.runner.execute import ProposedRun, RunSettings, new_run
from benchyard.runner.isolation import refuse_store_url
from benchyard.runner.loop import run_async
from benchyard.runner.plan import plan_attempts
from benchyard.runner.worker import execute_run
from benchyard.spec.loader import Benchmark
from benchyard.store.records import VERDICTS, AttemptRecord, RunRecord
from benchyard.store.schema import attempt_queue
from benchyard.store.store import Store
from benchyard.untrusted import remove_tree
from tests.support import write_benchmark

TIMEOUT_SEC = 3.0  # each attempt's limit: a stopped agent is ended by it quickly
CHECK_TIMEOUT_SEC = 5.0  # each code check's own limit: a stopped check sandbox is ended by it
KINDS = ("tool", "code", "answer")
PER_KIND = 4  # scenarios of each kind in the benchmark
CONCURRENCIES = (1, 2, 4, 8, 16)
END_MARK = "soak-end "  # the agent's own clock when it is about to exit, in its trajectory
# The system's interpreter without site: a venv's or pyenv's .pth files cost ~50 ms per start.
PYTHON = "/usr/bin/python3 -I -S"
# No run ending for this long is a hang: the longest run (12 attempts at -j 4, each of 3 tries
# stopped and timed out, its code checks too) takes about 2 minutes, the watchdog's grace aside.
STALL_SEC = 600.0

AGENT = r'''"""A soak agent: calls the scenario's tool through benchyard's tool server, fixes calc.py in
a coding scenario, or says the word it is asked to; now and then it hangs past its deadline,
claims a transient fault (exit 75) or leaves a process behind. Its randomness is seeded by the
try's attempt id."""
import http.client, json, os, random, socket, sys, time

rng = random.Random(os.environ["BENCHYARD_ATTEMPT_ID"])


def mark():
    with open(os.environ["BENCHYARD_TRAJECTORY_FILE"], "a") as out:
        out.write(json.dumps({"kind": "log", "content": "%s%.6f" % (END_MARK, time.time())}) + "\n")


class Tools(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(os.environ["BENCHYARD_TOOLS_SOCKET"])


time.sleep(rng.uniform(0.0, 0.3))
fate = rng.random()
if fate < 0.03:
    time.sleep(60)  # a hang: the attempt's timeout must end it
if fate > 0.97 and os.fork() == 0:
    os.setsid()  # a process left behind in the background
    time.sleep(60)
    os._exit(0)
question = open(os.environ["BENCHYARD_INSTRUCTION_FILE"]).read().split()
if "BENCHYARD_TOOLS_SOCKET" in os.environ:
    connection = Tools("tools")
    connection.request("GET", "/tools")
    json.loads(connection.getresponse().read())
    connection.request("POST", "/call", json.dumps({"name": "lookup", "arguments": {"key": question[-1]}}))
    answer = json.loads(connection.getresponse().read()).get("result", "?")
    connection.close()
elif os.path.exists("calc.py"):
    with open("calc.py") as source:
        code = source.read()
    with open("calc.py", "w") as source:
        source.write(code.replace("a - b", "a + b"))
    answer = "fixed add"
else:
    answer = question[-1]
mark()
if 0.03 <= fate < 0.08:
    sys.exit(75)  # a claimed transient fault: retried, each try kept
print(answer)
'''.replace("END_MARK", repr(END_MARK))

CALC = "def add(a, b):\n    return a - b\n"
CALC_TEST = """import unittest

from calc import add


class TestAdd(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
"""


def scenarios() -> list[dict[str, Any]]:
    """PER_KIND scenarios of each kind: a tool call through the tool server, a fix graded by a
    code check in a verification sandbox, a plain answer."""
    made: list[dict[str, Any]] = []
    for i in range(PER_KIND):
        key, value = f"key{i}", f"value-{i}"
        made.append(
            {
                "id": f"tool-{i}",
                "category": "tool",
                "stimulus": f"Look up, with the lookup tool, the value of {key}",
                "tools": [
                    {
                        "name": "lookup",
                        "parameters": {
                            "type": "object",
                            "properties": {"key": {"type": "string"}},
                            "required": ["key"],
                        },
                        "responses": [{"when": {"key": key}, "result": value}, {"error": "no"}],
                    }
                ],
                "checks": [
                    {"type": "equals", "value": value},
                    {"type": "tool_chain", "mode": "must_include", "calls": [{"name": "lookup"}]},
                ],
                "reference": {
                    "answer": value,
                    "tool_calls": [{"name": "lookup", "arguments": {"key": key}}],
                },
            }
        )
        made.append(
            {
                "id": f"code-{i}",
                "category": "code",
                "stimulus": {"task": "add in calc.py subtracts: make it add"},
                "fixtures": {
                    "files": [{"dest": "calc.py", "content": CALC}],
                    "verification": [{"dest": "test_calc.py", "content": CALC_TEST}],
                },
                "checks": [
                    {"type": "tests", "timeout_sec": CHECK_TIMEOUT_SEC},
                    {"type": "diff_quality", "allowed_paths": ["calc.py"]},
                ],
                "reference_change": {
                    "files": [{"dest": "calc.py", "content": CALC.replace("-", "+")}]
                },
            }
        )
        word = f"word{i}"
        made.append(
            {
                "id": f"answer-{i}",
                "category": "answer",
                "stimulus": f"say {word}",
                "checks": [{"type": "equals", "value": word}],
                "reference": word,
            }
        )
    return made


@dataclass(frozen=True)
class Soak:
    """The benchmark, the agent and where the runs go."""

    benchmark: Benchmark
    agent: Agent
    agent_script: Path
    work_root: Path
    store_url: str

    @classmethod
    def prepare(cls, root: Path, work_root: Path, store_url: str) -> Soak:
        """The benchmark and the agent's script under `root`; runs' scratch under `work_root`
        (short: see `short_work_root`)."""
        root.mkdir(parents=True, exist_ok=True)
        script = root / "agent" / "soak_agent.py"
        script.parent.mkdir(exist_ok=True)
        script.write_text(AGENT, encoding="utf-8")
        bench = write_benchmark(
            root / "bench", scenarios(), name="soak", defaults={"timeout_sec": TIMEOUT_SEC}
        )
        agent = build_agent("soak", {"kind": "command", "command": f"{PYTHON} {script}"})
        return cls(load_benchmark(str(bench)), agent, script, work_root, store_url)


@contextlib.contextmanager
def short_work_root() -> Iterator[Path]:
    """A private, empty work root with a path short enough for the tool server's Unix socket.

    The socket lies at WORK_ROOT/benchyard-RUN-PID-XXXXXXXX/io/ATTEMPT/tools.sock, and the tool
    server offers it only when that path fits in 100 bytes (agents/tool_server.py); the rest takes
    91, so a work root of more than 9 characters (any pytest tmp_path) leaves a sandboxed agent
    without its tools. Removed afterwards."""
    for _ in range(100):
        path = Path(f"/tmp/{random.randrange(16**4):04x}")
        try:
            path.mkdir(mode=0o755)
        except FileExistsError:
            continue
        break
    else:
        raise RuntimeError("no free short work root under /tmp")
    try:
        yield path
    finally:
        remove_tree(path, ignore_errors=True)


@dataclass(frozen=True)
class RunSpec:
    """One run: which scenarios, how many epochs, at what concurrency (`-j`)."""

    scenario_ids: tuple[str, ...]
    epochs: int
    concurrency: int

    @property
    def planned(self) -> int:
        return len(self.scenario_ids) * self.epochs


def random_specs(count: int, rng: random.Random) -> list[RunSpec]:
    """`count` runs of a few attempts each (1 to 4 scenarios of any kinds, one in five with 2
    epochs), at concurrencies from 1 to 16; one in eight is wider (8 to 12 scenarios, at 4 to 16)
    so that the higher concurrencies have lanes to fill."""
    every = [f"{kind}-{i}" for kind in KINDS for i in range(PER_KIND)]
    specs = []
    for number in range(count):
        wide = number % 8 == 7
        size = rng.randint(8, len(every)) if wide else rng.randint(1, 4)
        epochs = 2 if not wide and rng.random() < 0.2 else 1
        chosen = tuple(sorted(rng.sample(every, size)))
        concurrency = rng.choice(CONCURRENCIES[2:] if wide else CONCURRENCIES)
        specs.append(RunSpec(chosen, epochs, concurrency))
    return specs


@dataclass
class Outcome:
    spec: RunSpec
    run: RunRecord | None = None
    error: str | None = None  # the traceback of an exception the run raised, or why it never ended
    seconds: float = 0.0


def settings_for(soak: Soak, spec: RunSpec) -> RunSettings:
    return RunSettings(
        concurrency=spec.concurrency,
        epochs=spec.epochs,
        retries=2,
        retry_backoff_sec=0.05,
        sandbox="bwrap",
        work_root=str(soak.work_root),
    )


async def run_one(soak: Soak, store: Store, spec: RunSpec) -> Outcome:
    """One run through the library API, as `runner.api.execute` (what `benchyard run` calls)
    records and executes it, but awaited, so that several runs share one event loop."""
    settings = settings_for(soak, spec)
    by_id = {scenario.id: scenario for scenario in soak.benchmark.scenarios}
    plan = plan_attempts([by_id[sid] for sid in spec.scenario_ids], epochs=spec.epochs)
    started = time.monotonic()
    try:
        where = LocalExecutor()
        scenarios = list({sid: by_id[sid] for sid in spec.scenario_ids}.values())
        where.check(ProposedRun(settings, soak.benchmark, soak.agent, store.url, scenarios))
        refuse_store_url(soak.agent, store.url)
        run = recorded_run(new_run(soak.benchmark, soak.agent, settings, len(plan), None))
        run = await execute_run(
            store, soak.benchmark, soak.agent, plan, run, settings, None, None, where
        )
    except Exception:
        return Outcome(spec, error=traceback.format_exc(), seconds=time.monotonic() - started)
    return Outcome(spec, run, seconds=time.monotonic() - started)


def run_load(soak: Soak, specs: Sequence[RunSpec], lanes: int) -> list[Outcome]:
    """Every run of `specs`, `lanes` at a time (each lane runs its share one after another), all
    in one event loop through `runner.loop.run_async` in this (the main) thread, as a worker
    serves several runs; in spec order. A load that stops making progress (no run ending for
    STALL_SEC, far more than any one run takes) is a hang: a monitor thread records the loop's
    stacks and interrupts it (as Ctrl-C would), and the runs not ended say so."""
    outcomes: list[Outcome | None] = [None] * len(specs)
    loops: list[asyncio.AbstractEventLoop] = []

    async def lane(store: Store, indexes: list[int]) -> None:
        for index in indexes:
            outcomes[index] = await run_one(soak, store, specs[index])

    async def load() -> None:
        loops.append(asyncio.get_running_loop())
        store = Store.open(soak.store_url)
        try:
            shares = [list(range(start, len(specs), lanes)) for start in range(lanes)]
            await asyncio.gather(*(lane(store, share) for share in shares))
        finally:
            store.close()

    done = threading.Event()
    hung: list[str] = []

    def monitor() -> None:
        ended, progress = 0, time.monotonic()
        while not done.wait(1.0):
            now_ended = sum(outcome is not None for outcome in outcomes)
            if now_ended != ended:
                ended, progress = now_ended, time.monotonic()
            elif time.monotonic() - progress > STALL_SEC:
                hung.append(f"no run ended for {STALL_SEC:g} s: a hang; {stacks(loops)}")
                _thread.interrupt_main()
                return

    threading.Thread(target=monitor, name="soak-monitor", daemon=True).start()
    try:
        run_async(load())
    except KeyboardInterrupt:
        if not hung:
            raise
    finally:
        done.set()
    return [
        outcome
        if outcome is not None
        else Outcome(specs[index], error=hung[0] if hung else "never ran")
        for index, outcome in enumerate(outcomes)
    ]


def stacks(loops: Sequence[asyncio.AbstractEventLoop]) -> str:
    """The main thread's stack and, as far as they can be read from another thread, the stacks of
    the loop's tasks (for a hang's report)."""
    main = sys._current_frames().get(threading.main_thread().ident or 0)
    shown = ["main thread:\n" + "".join(traceback.format_stack(main) if main else [])]
    for loop in loops:
        with contextlib.suppress(Exception):  # read while the loop runs: best effort
            for task in list(asyncio.all_tasks(loop))[:40]:
                text = io.StringIO()
                task.print_stack(limit=8, file=text)
                shown.append(text.getvalue())
    return "\n".join(shown)


# ---- chaos ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Strike:
    at: float  # time.time() when the signal was sent
    pid: int
    signal: int
    target: str  # agent | sandbox
    attempt_id: str | None  # the try it belonged to, when it could be told
    checking: bool  # a code check's verification sandbox, not the agent's


ATTEMPT_IN_PATH = re.compile(r"/(?:work|io|verify)/([0-9a-f]{32})(?:/|$)")


class Chaos:
    """A thread that, every `interval` seconds (random within it), sends SIGKILL or SIGSTOP to a
    random process among this process's descendants that is an agent (its command line runs the
    agent's script) or a sandbox (bwrap: the agent's, or a code check's), not stopped already.
    Stopped processes are left stopped: the attempt's timeout (or its code check's) must end
    them."""

    def __init__(
        self,
        agent_script: Path,
        rng: random.Random,
        interval: tuple[float, float] = (0.1, 0.4),
        stop_share: float = 0.5,
    ) -> None:
        self.agent_script = str(agent_script)
        self.rng = rng
        self.interval = interval
        self.stop_share = stop_share
        self.strikes: list[Strike] = []
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="chaos", daemon=True)

    def __enter__(self) -> Chaos:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._halt.set()
        self._thread.join()

    def counts(self) -> Counter[str]:
        return Counter(
            f"{signal.Signals(strike.signal).name} {strike.target}" for strike in self.strikes
        )

    def _loop(self) -> None:
        while not self._halt.wait(self.rng.uniform(*self.interval)):
            with contextlib.suppress(OSError):
                self.strike()

    def strike(self) -> None:
        targets = list(self.targets())
        if not targets:
            return
        pid, target, cmdline = self.rng.choice(targets)
        number = signal.SIGSTOP if self.rng.random() < self.stop_share else signal.SIGKILL
        attempt_id = attempt_of(pid, cmdline)
        os.kill(pid, number)
        checking = target == "sandbox" and "/verify/" in " ".join(cmdline)
        self.strikes.append(Strike(time.time(), pid, number, target, attempt_id, checking))

    def targets(self) -> Iterator[tuple[int, str, list[str]]]:
        """(pid, agent or sandbox, command line) of each live descendant that is either."""
        for pid in descendants(os.getpid()):
            cmdline, state = read_process(pid)
            if not cmdline or state in ("Z", "X", "T"):
                continue  # gone, or stopped already
            if os.path.basename(cmdline[0]) == "bwrap":
                yield pid, "sandbox", cmdline
            elif self.agent_script in cmdline:
                yield pid, "agent", cmdline


def attempt_of(pid: int, cmdline: list[str]) -> str | None:
    """The attempt id of an agent's or sandbox's try: from its environment (an agent's), else
    from the workdir or verification workdir its command line names (a sandbox's)."""
    with contextlib.suppress(OSError):
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        for entry in environ:
            if entry.startswith(b"BENCHYARD_ATTEMPT_ID="):
                return entry.split(b"=", 1)[1].decode()
    for argument in cmdline:
        found = ATTEMPT_IN_PATH.search(argument)
        if found:
            return found.group(1)
    return None


def read_process(pid: int) -> tuple[list[str], str]:
    """A process's command line and state letter (empty and '' when it is gone)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return [], ""
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part], stat.rsplit(
        ")", 1
    )[-1].split()[0]


def parents() -> dict[int, int]:
    """Each process's parent, from /proc."""
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry.name}/stat").read_text()
                found[int(entry.name)] = int(stat.rsplit(")", 1)[-1].split()[1])
    return found


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in parents().items():
        children.setdefault(parent, []).append(pid)
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


# ---- what must hold afterwards --------------------------------------------------------------


@dataclass
class Leftovers:
    zombies: list[str] = field(default_factory=list)  # children of this process not reaped
    alive: list[str] = field(default_factory=list)  # agents and sandboxes still running

    def __bool__(self) -> bool:
        return bool(self.zombies or self.alive)


def leftover_processes(
    agent_script: Path, known: set[int], patience_sec: float = 30.0
) -> Leftovers:
    """Zombies among this process's children, and agents or sandboxes among its descendants,
    that were not there before (`known`), once given `patience_sec` to go (a killed tree reaped by
    a thread, say): what is still there then was left behind."""
    deadline = time.monotonic() + patience_sec
    while True:
        found = Leftovers()
        me = os.getpid()
        for pid, parent in parents().items():
            if pid in known:
                continue
            cmdline, state = read_process(pid)
            shown = f"{pid} {state} {' '.join(cmdline)[:160]}"
            if parent == me and state == "Z":
                found.zombies.append(shown)
        for pid in descendants(me):
            cmdline, state = read_process(pid)
            if pid in known or not cmdline or state == "Z":
                continue
            if os.path.basename(cmdline[0]) == "bwrap" or str(agent_script) in cmdline:
                found.alive.append(f"{pid} {state} {' '.join(cmdline)[:160]}")
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def leftover_scratch(work_root: Path) -> list[str]:
    """Whatever the runs left under their work root (each run removes its scratch directory)."""
    return sorted(str(path) for path in work_root.iterdir())


def run_problems(store: Store, outcome: Outcome) -> list[str]:
    """What is wrong with one run, as the store has it: it ended (finished); every planned attempt
    is there exactly once with a final verdict, as its last try, every earlier try kept as a
    superseded error; the queue and the verdict counts agree."""
    spec = outcome.spec
    if outcome.error is not None or outcome.run is None:
        return [f"the run raised: {outcome.error}"]
    run = store.get_run(outcome.run.id)
    name = f"run {run.id[:8]} ({spec})"
    problems = []
    if run.status != "finished" or run.finished_at is None or outcome.run.status != "finished":
        problems.append(f"{name}: status {run.status} ({run.status_reason}), not finished")
    if run.planned_attempts != spec.planned:
        problems.append(f"{name}: {run.planned_attempts} planned, {spec.planned} asked")
    tries: dict[tuple[str, int], list[AttemptRecord]] = {}
    for attempt in store.attempts(run.id, include_superseded=True):
        tries.setdefault((attempt.scenario_id, attempt.epoch), []).append(attempt)
    wanted = {(sid, epoch) for sid in spec.scenario_ids for epoch in range(1, spec.epochs + 1)}
    if set(tries) != wanted:
        problems.append(
            f"{name}: attempts missing {sorted(wanted - set(tries))}, "
            f"unplanned {sorted(set(tries) - wanted)}"
        )
    for key, its_tries in sorted(tries.items()):
        problems += [f"{name} {key}: {problem}" for problem in try_problems(its_tries)]
    counts = store.verdict_counts([run.id]).get(run.id, {})
    if sum(counts.values()) != len(wanted) or set(counts) - set(VERDICTS):
        problems.append(f"{name}: verdict counts {counts} for {len(wanted)} planned attempts")
    problems += queue_problems(store, name, run.id, tries)
    return problems


def try_problems(tries: list[AttemptRecord]) -> list[str]:
    """An attempt's tries: numbered 1..n, only the last one final, with a verdict; the others
    superseded errors (retried faults)."""
    ordered = sorted(tries, key=lambda attempt: attempt.try_number)
    numbers = [attempt.try_number for attempt in ordered]
    problems = []
    if numbers != list(range(1, len(ordered) + 1)):
        problems.append(f"try numbers {numbers}")
    final = [attempt for attempt in ordered if not attempt.superseded]
    if len(final) != 1 or final[0] is not ordered[-1]:
        problems.append(f"{len(final)} final tries among {numbers}, not one last")
    if ordered[-1].verdict not in VERDICTS:
        problems.append(f"final verdict {ordered[-1].verdict!r}")
    for earlier in ordered[:-1]:
        if not earlier.superseded or earlier.verdict != "error":
            problems.append(
                f"try {earlier.try_number}: {earlier.verdict}, superseded={earlier.superseded}"
            )
    return problems


def queue_problems(
    store: Store, name: str, run_id: str, tries: dict[tuple[str, int], list[AttemptRecord]]
) -> list[str]:
    """Each attempt's queue row is done, once, with as many tries as the store holds."""
    query = select(
        attempt_queue.c.scenario_id,
        attempt_queue.c.epoch,
        attempt_queue.c.state,
        attempt_queue.c.tries,
    ).where(attempt_queue.c.run_id == run_id)
    with store.engine.connect() as connection:
        rows = connection.execute(query).all()
        total = connection.execute(
            select(func.count()).select_from(attempt_queue).where(attempt_queue.c.run_id == run_id)
        ).scalar_one()
    problems = []
    if total != len(tries):
        problems.append(f"{name}: {total} queue rows for {len(tries)} attempts")
    for row in rows:
        stored = len(tries.get((row.scenario_id, row.epoch), []))
        if row.state != "done" or row.tries != stored:
            problems.append(
                f"{name} ({row.scenario_id}, {row.epoch}): queue {row.state} with {row.tries} "
                f"tries, {stored} stored"
            )
    return problems
