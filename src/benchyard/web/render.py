"""Answering with a page: the same Pydantic model rendered through a Jinja2 template (HTML,
autoescaped: agent output is always text) or dumped as JSON, as the request asks."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from benchyard.web.access import wants_json
from benchyard.web.csrf import CSRF_FIELD, STATE_KEY
from benchyard.web.display import ansi, neutralise, verbatim
from benchyard.web.headers import META_POLICY


def make_environment() -> Environment:
    environment = Environment(
        loader=PackageLoader("benchyard.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=neutralise,
    )
    environment.globals["query_with"] = query_with
    environment.filters.update(
        pct=percent,
        ci=interval,
        num=number,
        usd=dollars,
        sec=seconds,
        when=moment,
        short=short_id,
        ansi=ansi,
        verbatim=verbatim,
    )
    return environment


class Renderer:
    def __init__(
        self, read_only: bool, *, static_copy: bool = False, static_compare: bool = False
    ) -> None:
        self.environment = make_environment()
        self.read_only = read_only
        self.static_copy = static_copy  # a page of a static copy (web/bundle.py)
        self.static_compare = static_compare

    def respond(
        self, request: Request, template: str, page: BaseModel, status_code: int = 200
    ) -> Response:
        """JSON for /api/ and for `Accept: application/json`, else the page's template (which
        links its JSON twin when it is a page that was found)."""
        if wants_json(request):
            return JSONResponse(page.model_dump(mode="json"), status_code=status_code)
        twin = json_twin(request) if status_code == 200 and request.method == "GET" else None
        return HTMLResponse(
            self.html(request, template, page, json_twin=twin), status_code=status_code
        )

    def html(
        self,
        request: Request,
        template: str,
        page: BaseModel,
        *,
        json_twin: str | None = None,
        **extra: Any,
    ) -> str:
        return self.environment.get_template(template).render(
            json_twin=json_twin,
            page=page,
            request=request,
            read_only=self.read_only,
            static_copy=self.static_copy,
            static_compare=self.static_compare,
            meta_policy=META_POLICY,
            csrf_field=CSRF_FIELD,
            csrf_token=request.scope.get("state", {}).get(STATE_KEY, ""),
            **extra,
        )


def json_twin(request: Request) -> str:
    """The address of this page as JSON: the same path and query under /api/."""
    query = request.url.query
    return f"/api{request.url.path}" + (f"?{query}" if query else "")


def query_with(request: Request, **changes: Any) -> str:
    """This page's query string with `changes` made (None or "" drops a parameter; a list gives
    it several values), for links that page, sort or filter."""
    kept = [(k, v) for k, v in request.query_params.multi_items() if k not in changes]
    for key, value in changes.items():
        values = value if isinstance(value, list | tuple) else [value]
        kept += [(key, str(v)) for v in values if v is not None and v != ""]
    return "?" + urlencode(kept) if kept else "?"


# ---- filters ---------------------------------------------------------------------------------


def percent(value: float | None, digits: int = 1) -> str:
    return "—" if value is None or math.isnan(value) else f"{100 * value:.{digits}f}%"


def interval(bounds: tuple[float, float] | list[float] | None) -> str:
    if not bounds:
        return ""
    low, high = bounds
    return f"[{100 * low:.1f}, {100 * high:.1f}]"


def number(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "—"
    if float(value).is_integer() and digits >= 0 and abs(value) >= 1000:
        return f"{int(value):,}"
    return f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}"


def dollars(value: float | None) -> str:
    if value is None:
        return "unknown"  # no price known and none claimed: never $0.0000
    return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"


def seconds(value: float | None) -> str:
    if value is None:
        return "—"
    if value < 1:
        return f"{value * 1000:.0f} ms"
    if value < 120:
        return f"{value:.1f} s"
    minutes, rest = divmod(int(value), 60)
    return f"{minutes} min {rest} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def moment(value: datetime | None) -> str:
    if value is None:
        return "—"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def short_id(value: str | None, length: int = 8) -> str:
    return "" if value is None else value[:length]
