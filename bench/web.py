"""Web UI at scale (issue 24, item 2): every page of a run of BENCH_WEB_SIZE (100,000) attempts and
of a comparison of two such runs, and the report API, against the CLI on the same store.

The store is bench/compare.py's (`fill`): a baseline and a candidate of one benchmark written
through the store API, each attempt with two check results, a short trajectory, an answer and
output; the candidate differs on one attempt in 16 (about 6,250 rows of 100,000 differ). Each
repetition starts a fresh `benchyard serve --read-only` process and asks, in turn: the run page
and the comparison for the first time since it started (cold), then each page twice (its first
view, then warm), the report API last; then it runs the CLI commands the pages are compared with. Repetitions alternate
server and CLI (interleaved), BENCH_WEB_REPEAT times (3).

For each page: the server's CPU seconds for the request (user + system of the server process, from
/proc, before and after: the server does nothing else meanwhile), the wall time until the last
byte of the body (httpx), and with chromium (BENCH_WEB_BROWSER=0 to leave it out) the browser's
load of the page (the navigation's duration, request to the load event; warm: the page was asked
for once before). The CLI's figures are the CPU and wall time of the whole command (os.wait4):
`compare A B` for the comparison's pages, `report B` for the run's pages and the runs list,
`report B --format json` for the report API. Each line gives the median with its range, and the
ratio to the CLI command measured in the same repetition.

Goals (issue 24): every page <= 1 s in the browser (warm) and <= 0.2 s of server CPU; the report
API <= 2x the CLI's `report --format json`.
Run: .venv/bin/python bench/web.py   (BENCH_WEB_SIZE=20000 for a quicker look; BENCH_WEB_STORE=FILE
keeps the filled store in FILE and uses it again when it is there)
"""

from __future__ import annotations

import sys

sys.path.append(sys.path.pop(0))  # this file's directory last: `queue` must stay the stdlib's

import os
import socket
import sqlite3
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from common import BENCHYARD, as_installed, ratios, spread

SIZE = int(os.environ.get("BENCH_WEB_SIZE", "100000"))
REPEAT = int(os.environ.get("BENCH_WEB_REPEAT", "3"))
BROWSER = os.environ.get("BENCH_WEB_BROWSER", "1") != "0" and Path("/usr/bin/chromium").exists()
TOKEN = "bench-web-token-" + "x" * 32
TICK = os.sysconf("SC_CLK_TCK")
GOAL_CPU, GOAL_BROWSER, GOAL_REPORT = 0.2, 1.0, 2.0


def pages(baseline: str, candidate: str, attempt: str, grid_pages: int) -> dict[str, str]:
    """The pages asked for warm, by name, each with the CLI command it is compared with."""
    compare = f"/compare?run={baseline}&run={candidate}"
    middle = (SIZE // 100) // 2
    return {
        "runs list": "/runs",
        "runs list by accuracy": "/runs?sort=accuracy",
        "run page": f"/runs/{candidate}",
        "run sorted by duration": f"/runs/{candidate}?sort=duration&order=desc",
        "run failures only": f"/runs/{candidate}?verdict=failed&verdict=timeout",
        "run page 1000": f"/runs/{candidate}?page=1000",
        "drawer": f"/attempts/{attempt}?fragment=1",
        "compare": compare,
        "compare last page": f"{compare}&page={grid_pages}",
        "compare regressions": f"{compare}&show=regressions",
        "compare all, middle page": f"{compare}&show=all&page={middle}",
        "side by side": f"/compare/side?runs={baseline},{candidate}&scenario=scenario-000000",
    }


def cli_of(name: str) -> str:
    if name.startswith(("compare", "side")):
        return "compare"
    return "report"


def store_of(path: Path) -> tuple[str, str, str]:
    """The store at `path` (filled by bench/compare.py's `fill` unless there), its baseline and
    candidate and an attempt in the candidate's middle. Filled in another process, as
    bench/big_runs.py does, so that this one stays small."""
    if not path.exists():
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); from compare import fill; "
            "fill(sys.argv[2], (int(sys.argv[3]),))"
        )
        here = str(Path(__file__).parent)
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", code, here, f"sqlite:///{path}", str(SIZE)], check=True
        )
        print(f"filled two runs of {SIZE:,} attempts in {time.perf_counter() - started:.0f} s")
    with sqlite3.connect(path) as connection:
        runs = [row[0] for row in connection.execute("SELECT id FROM runs ORDER BY started_at")]
        (middle,) = connection.execute(
            "SELECT id FROM attempts WHERE run_id = ? ORDER BY scenario_id LIMIT 1 OFFSET ?",
            (runs[1], SIZE // 2),
        ).fetchone()
    return runs[0], runs[1], middle


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of the process, all its threads (dead ones too)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


@contextmanager
def server(url: str, workdir: Path) -> Iterator[tuple[int, httpx.Client]]:
    port = free_port()
    process = subprocess.Popen(
        [*BENCHYARD, "serve", "--read-only", "--db", url, "--port", str(port)],
        cwd=workdir,
        env={**os.environ, "BENCHYARD_WEB_TOKEN": TOKEN},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    headers = {"authorization": f"Bearer {TOKEN}", "accept": "text/html"}
    try:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=600
        ) as client:
            deadline = time.monotonic() + 60
            while True:
                try:
                    client.get("/static/benchyard.css")
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            yield process.pid, client
    finally:
        process.terminate()
        process.wait(timeout=30)


def ask(pid: int, client: httpx.Client, path: str, **headers: str) -> tuple[float, float, int]:
    """Server CPU seconds, wall seconds to the last byte, and the body's size."""
    before = process_cpu(pid)
    started = time.perf_counter()
    answer = client.get(path, headers=headers)
    wall = time.perf_counter() - started
    time.sleep(0.05)  # the response's last bytes leave the server's threads
    answer.raise_for_status()
    return process_cpu(pid) - before, wall, len(answer.content)


class Figures:
    def __init__(self) -> None:
        self.cpu: list[float] = []
        self.wall: list[float] = []
        self.browser: list[float] = []
        self.first: list[float] = []  # server CPU of the page's first view
        self.size = 0


def cli(command: list[str], figures: Figures, cwd: Path) -> None:
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    figures.wall.append(time.perf_counter() - started)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} exited {os.waitstatus_to_exitcode(status)}")
    figures.cpu.append(usage.ru_utime + usage.ru_stime)


def repetition(
    url: str,
    workdir: Path,
    runs: tuple[str, str, str],
    figures: dict[str, Figures],
    browse: Callable[[str, str], float] | None,
) -> None:
    baseline, candidate, attempt = runs
    with server(url, workdir) as (pid, client):  # a fresh one: the first views are cold
        cold = pages(baseline, candidate, attempt, 1)
        for name, path in (
            ("run page, cold", cold["run page"]),
            ("compare, cold", cold["compare"]),
        ):
            note(figures, name, ask(pid, client, path))
        grid = client.get(cold["compare"], headers={"accept": "application/json"}).json()
        targets = pages(baseline, candidate, attempt, (grid.get("paging") or {}).get("pages", 1))
        for name, path in targets.items():
            first = ask(pid, client, path)  # its first view: what it needs that nothing did before
            got = note(figures, name, ask(pid, client, path))
            got.first.append(first[0])
            if browse is not None:
                got.browser.append(browse(str(client.base_url), path))
        path = f"/api/runs/{candidate}/report"
        note(figures, "report API", ask(pid, client, path, accept="application/json"))
    db = ["--db", url]
    for name, argv in (
        ("CLI compare", ["compare", baseline, candidate]),
        ("CLI report", ["report", candidate]),
        ("CLI report --format json", ["report", candidate, "--format", "json"]),
    ):
        cli([*BENCHYARD, *argv, *db], figures.setdefault(name, Figures()), workdir)


def note(figures: dict[str, Figures], name: str, taken: tuple[float, float, int]) -> Figures:
    got = figures.setdefault(name, Figures())
    got.cpu.append(taken[0])
    got.wall.append(taken[1])
    got.size = taken[2]
    return got


@contextmanager
def browser() -> Iterator[Callable[[str, str], float] | None]:
    """A chromium tab that loads a page (logged in on its first) and says how long it took."""
    if not BROWSER:
        yield None
        return
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver, tempfile.TemporaryDirectory() as profile:
        context = driver.chromium.launch_persistent_context(
            profile,
            executable_path="/usr/bin/chromium",
            args=["--headless", "--no-sandbox", "--disable-gpu"],
            headless=True,
        )
        tab = context.pages[0] if context.pages else context.new_page()
        tab.set_default_timeout(600_000)

        entered: set[str] = set()

        def load(base: str, path: str) -> float:
            """The page's load in the browser (it was asked for before: warm)."""
            base = base.rstrip("/")
            if base not in entered:  # a new server, a new port: its token once, for the cookie
                tab.goto(f"{base}/runs?token={TOKEN}", wait_until="load")
                entered.add(base)
            tab.goto(f"{base}{path}", wait_until="load")
            timing: Any = tab.evaluate(
                "() => performance.getEntriesByType('navigation')[0].duration"
            )
            return float(timing) / 1000

        try:
            yield load
        finally:
            context.close()


def report(figures: dict[str, Figures]) -> None:
    cli_cpu = {name: figures[f"CLI {name}"].cpu for name in ("compare", "report")}
    print(
        f"\nmedian (min-max, n) of {REPEAT} interleaved repetitions; x: over the CLI command "
        "measured in the same repetition (compare A B for compare pages, report B for run pages)"
    )
    head = f"{'':26}{'1st view CPU s':>28}{'server CPU s':>28}{'x CLI CPU':>28}{'wall s':>28}"
    print(head + (f"{'browser s':>28}" if BROWSER else "") + f"{'KiB':>8}")
    over = []
    for name, got in figures.items():
        if name.startswith("CLI") or name == "report API":
            continue
        base = cli_of(name.split(",")[0])
        line = f"{name:26}{spread(got.first) if got.first else '':>28}{spread(got.cpu):>28}"
        line += f"{'x' + spread(ratios(got.cpu, cli_cpu[base])):>28}"
        line += f"{spread(got.wall):>28}"
        line += f"{spread(got.browser):>28}" if got.browser else (" " * 28 if BROWSER else "")
        print(line + f"{got.size / 1024:8.0f}")
        if "cold" not in name and (
            statistics.median(got.cpu) > GOAL_CPU
            or statistics.median(got.browser or got.wall) > GOAL_BROWSER
        ):
            over.append(name)
    api, json_cli = figures["report API"], figures["CLI report --format json"]
    print(f"\n{'':26}{'CPU s':>28}{'wall s':>28}{'x CLI wall':>28}{'MiB':>8}")
    print(
        f"{'report API':26}{spread(api.cpu):>28}{spread(api.wall):>28}"
        f"{'x' + spread(ratios(api.wall, json_cli.wall)):>28}{api.size / 2**20:8.1f}"
    )
    for name in ("CLI compare", "CLI report", "CLI report --format json"):
        print(f"{name:26}{spread(figures[name].cpu):>28}{spread(figures[name].wall):>28}")
    if statistics.median(ratios(api.wall, json_cli.wall)) > GOAL_REPORT:
        over.append("report API")
    print(
        f"goal (issue 24): warm pages <= {GOAL_CPU} s server CPU and <= {GOAL_BROWSER} s "
        f"({'browser' if BROWSER else 'wall'}), report API <= {GOAL_REPORT}x the CLI's "
        f"report --format json; medians: {'all within' if not over else 'over: ' + ', '.join(over)}"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        as_installed(root)
        kept = os.environ.get("BENCH_WEB_STORE")
        path = Path(kept) if kept else root / "bench.db"
        runs = store_of(path)
        url = f"sqlite:///{path}"
        cli([*BENCHYARD, "report", runs[1], "--db", url], Figures(), root)  # warm-up: bytecode
        figures: dict[str, Figures] = {}
        with browser() as browse:
            for _ in range(REPEAT):
                repetition(url, root, runs, figures, browse)
        report(figures)


if __name__ == "__main__":
    main()
