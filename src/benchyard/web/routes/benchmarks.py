"""Benchmarks: the list, one benchmark's scenarios, its history and its evolution, and its files
(fixtures), which never lead outside the benchmark's directory."""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath
from typing import Annotated, BinaryIO, Literal

from fastapi import APIRouter, Depends, HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from benchyard.report.render import shorten
from benchyard.spec.loader import Benchmark
from benchyard.store.browse import RunFilter, list_runs, recorded_benchmarks
from benchyard.web.catalog import KnownBenchmark
from benchyard.web.evolution import evolution
from benchyard.web.models import BenchmarkPage, BenchmarkRow, BenchmarksPage, ScenarioRow
from benchyard.web.routing import page
from benchyard.web.rows import run_rows
from benchyard.web.state import AppState, app_state

router = APIRouter()
State = Annotated[AppState, Depends(app_state)]
HISTORY_RUNS = 200
FILE_CAP_BYTES = 1024 * 1024


@page(router, "/benchmarks")
def benchmarks_page(request: Request, state: State) -> Response:
    recorded = recorded_benchmarks(state.store)
    runs = {entry.name: entry.runs for entry in recorded}
    known = state.catalog.known([(entry.name, entry.path) for entry in recorded])
    rows = [_row(state, entry, runs.get(entry.name, 0)) for entry in known]
    names = {entry.name for entry in known}
    rows += [
        BenchmarkRow(
            name=entry.name,
            version=None,
            content_hash=None,
            path=entry.path,
            origin="recorded",
            editable=False,
            scenarios=None,
            problem="not on disk any more",
            runs=entry.runs,
        )
        for entry in recorded
        if entry.name not in names
    ]
    return state.renderer.respond(request, "benchmarks.html", BenchmarksPage(rows=rows))


def _row(state: AppState, known: KnownBenchmark, runs: int) -> BenchmarkRow:
    loaded = state.catalog.load(known.path)
    benchmark = loaded.benchmark
    return BenchmarkRow(
        name=known.name,
        version=benchmark.version if benchmark else None,
        content_hash=benchmark.content_hash if benchmark else None,
        path=str(known.path),
        origin=known.origin,
        editable=known.editable,
        scenarios=len(benchmark.scenarios) if benchmark else None,
        problem=loaded.problem,
        runs=runs,
    )


@page(router, "/benchmarks/{name}")
def benchmark_page(
    request: Request,
    state: State,
    name: str,
    tab: Literal["scenarios", "history", "evolution"] = "scenarios",
    agent: str = "",
    by: Literal["run", "commit"] = "run",
    saved: str = "",
) -> Response:
    recorded = {entry.name: entry for entry in recorded_benchmarks(state.store)}
    known = state.benchmark(name)
    if known is None and name not in recorded:
        raise HTTPException(404, f"no benchmark '{name}' on disk or in the store")
    if known is not None:
        row = _row(state, known, recorded[name].runs if name in recorded else 0)
        benchmark = state.catalog.load(known.path).benchmark
    else:
        entry = recorded[name]
        row = BenchmarkRow(
            name=name,
            version=None,
            content_hash=None,
            path=entry.path,
            origin="recorded",
            editable=False,
            scenarios=None,
            problem="not on disk any more",
            runs=entry.runs,
        )
        benchmark = None
    shown = BenchmarkPage(
        benchmark=row,
        tab=tab,
        scenarios=_scenarios(benchmark) if benchmark and tab == "scenarios" else [],
        history=[],
        evolution=None,
        saved=saved or None,
    )
    if tab == "history":
        runs, _ = list_runs(state.store, RunFilter(benchmark=name), limit=HISTORY_RUNS)
        shown.history = run_rows(state.store, runs)
    if tab == "evolution":
        shown.evolution = evolution(state.store, name, agent=agent or None, by=by)
    return state.renderer.respond(request, "benchmark.html", shown)


def _scenarios(benchmark: Benchmark) -> list[ScenarioRow]:
    return [
        ScenarioRow(
            id=scenario.id,
            category=scenario.category,
            difficulty=scenario.difficulty,
            tags=list(scenario.tags),
            stimulus=shorten(scenario.stimulus.turns[-1], 160),
            checks=[check.label for check in scenario.checks],
            file=benchmark.locations[scenario.id].file.relative_to(benchmark.root).as_posix(),
            line=benchmark.locations[scenario.id].line,
        )
        for scenario in benchmark.scenarios
    ]


@router.get("/benchmarks/{name}/files/{path:path}")
def benchmark_file(state: State, name: str, path: str) -> Response:
    """A file of the benchmark, as text: only a regular file inside the benchmark's directory,
    reached without leaving it (no '..', no absolute path, no link that leads outside)."""
    known = state.benchmark(name)
    if known is None:
        raise HTTPException(404, f"no benchmark '{name}'")
    file = inside(known.path, path)
    with _open_regular(file) as handle:
        data = handle.read(FILE_CAP_BYTES + 1)
    cut = len(data) > FILE_CAP_BYTES
    text = data[:FILE_CAP_BYTES].decode("utf-8", errors="replace")
    if cut:
        text += f"\n[cut at {FILE_CAP_BYTES} bytes]\n"
    return PlainTextResponse(text, media_type="text/plain; charset=utf-8")


def inside(root: Path, relative: str) -> Path:
    """The file `relative` names under `root`, or a 404 when it would lead anywhere else."""
    parts = PurePosixPath(relative).parts
    if not relative or "\x00" in relative or PurePosixPath(relative).is_absolute() or ".." in parts:
        raise HTTPException(404, "no such file in the benchmark")
    base = root.resolve()
    try:
        resolved = (base / relative).resolve(strict=True)
    except (OSError, RuntimeError):
        raise HTTPException(404, "no such file in the benchmark") from None
    if not resolved.is_relative_to(base):
        raise HTTPException(404, "no such file in the benchmark")
    return resolved


def _open_regular(file: Path) -> BinaryIO:
    try:
        descriptor = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        raise HTTPException(404, "no such file in the benchmark") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise HTTPException(404, "not a regular file")
    return os.fdopen(descriptor, "rb")
