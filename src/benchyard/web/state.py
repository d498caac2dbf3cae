"""What every handler shares: the open store, the benchmarks known, the run figures and comparisons
remembered, the renderer and the server's configuration."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from starlette.requests import Request

from benchyard.store.browse import recorded_benchmarks
from benchyard.store.store import Store
from benchyard.web.catalog import BenchmarkCatalog, KnownBenchmark
from benchyard.web.compare_grid import GridCache
from benchyard.web.config import WebConfig
from benchyard.web.overview import FiguresCache
from benchyard.web.render import Renderer


@dataclass
class AppState:
    config: WebConfig
    store: Store
    catalog: BenchmarkCatalog
    figures: FiguresCache
    renderer: Renderer
    workdir: Path  # where the server was started: rescore logs, the agent repository
    grids: GridCache = field(default_factory=GridCache)  # comparisons of runs that ended

    def recorded(self) -> list[tuple[str, str]]:
        return [(known.name, known.path) for known in recorded_benchmarks(self.store)]

    def benchmark(self, name: str) -> KnownBenchmark | None:
        return self.catalog.find(name, self.recorded())


def app_state(request: Request) -> AppState:
    state: AppState = request.app.state.benchyard
    return state
