"""The web application: routes by page, the security layers around them, static files shipped in
the package. `create_app` is what `benchyard serve` runs (and what tests start under uvicorn)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.staticfiles import StaticFiles

from benchyard.errors import BenchyardError
from benchyard.store.browse import AttemptNotFound
from benchyard.store.store import RunNotFound, Store
from benchyard.web.access import AccessGuard
from benchyard.web.catalog import BenchmarkCatalog
from benchyard.web.config import WebConfig
from benchyard.web.csrf import CsrfCookie
from benchyard.web.headers import SecurityHeaders
from benchyard.web.models import WebModel
from benchyard.web.overview import FiguresCache
from benchyard.web.render import Renderer
from benchyard.web.routes import (
    attempts,
    automation,
    benchmarks,
    compare,
    editing,
    queue,
    runs,
    side,
)
from benchyard.web.state import AppState
from benchyard.web.timing import ServerTiming

STATIC = Path(__file__).parent / "static"


class ErrorPage(WebModel):
    status: int
    error: str


def create_app(
    config: WebConfig, *, store: Store | None = None, workdir: Path | None = None
) -> FastAPI:
    """The application serving `config.store_url` (or an already open `store`)."""
    opened = store or Store.open(config.store_url)
    state = AppState(
        config=config,
        store=opened,
        catalog=BenchmarkCatalog(config.benchmark_dirs),
        figures=FiguresCache(),
        renderer=Renderer(
            read_only=config.read_only,
            static_copy=config.static_copy,
            static_compare=config.static_compare,
        ),
        workdir=(workdir or Path.cwd()).resolve(),
    )

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        if store is None:
            opened.close()

    app = FastAPI(
        title="benchyard",
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        lifespan=lifespan,
    )
    app.state.benchyard = state
    for module in (runs, attempts, side, compare, benchmarks, queue, editing, automation):
        app.include_router(module.router)
    if not config.read_only:
        app.include_router(queue.actions)
        app.include_router(editing.actions)
        app.include_router(automation.actions)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_api_route("/", _home, methods=["GET"], include_in_schema=False)
    _handle_errors(app, state)
    app.add_middleware(CsrfCookie)
    app.add_middleware(AccessGuard, config=config)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(ServerTiming)
    return app


def _home() -> Response:
    return RedirectResponse("/runs", status_code=303)


def _handle_errors(app: FastAPI, state: AppState) -> None:
    def page(request: Request, status: int, message: str) -> Response:
        return state.renderer.respond(
            request, "error.html", ErrorPage(status=status, error=message), status_code=status
        )

    async def not_found(request: Request, error: Exception) -> Response:
        return page(request, 404, str(error))

    async def refused(request: Request, error: Exception) -> Response:
        return page(request, 400, str(error))

    async def http_error(request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        return page(request, error.status_code, str(error.detail))

    async def invalid(request: Request, error: Exception) -> Response:
        assert isinstance(error, RequestValidationError)
        problems = "; ".join(
            f"{'.'.join(str(p) for p in item['loc'][1:])}: {item['msg']}" for item in error.errors()
        )
        return page(request, 400, problems)

    app.add_exception_handler(RunNotFound, not_found)
    app.add_exception_handler(AttemptNotFound, not_found)
    app.add_exception_handler(BenchyardError, refused)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
