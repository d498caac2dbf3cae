"""Who may reach the server: only with its token, on every address, loopback included (anything on
this machine can reach a loopback port: an agent given the network did). The token is given once
as `?token=` (then kept in a cookie), or as `Authorization: Bearer` by scripts. A loopback server
also answers only to a loopback host name (a page elsewhere cannot rebind its own name to
127.0.0.1 and read this one)."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from benchyard.web.config import WebConfig
from benchyard.web.tokens import token_matches

TOKEN_COOKIE = "benchyard_token"
TOKEN_PARAMETER = "token"
PUBLIC_PREFIX = "/static/"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
BEARER_STATE = "bearer"  # request.state flag: let in by an Authorization header (no cookie)


class AccessGuard:
    def __init__(self, app: ASGIApp, config: WebConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        refusal = self._refusal(request)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _refusal(self, request: Request) -> Response | None:
        if self.config.loopback and not self._loopback_host(request):
            return _refuse(request, 421, "this server answers only to a loopback host name")
        expected = self.config.token_sha256
        if expected is None:  # WebConfig refuses this; never served open
            return _refuse(request, 401, "this server has no token")
        if request.url.path.startswith(PUBLIC_PREFIX):
            return None
        given = request.query_params.get(TOKEN_PARAMETER)
        if given is not None:
            if not token_matches(given, expected):
                return _refuse(request, 401, "wrong token")
            return _enter(request, given)
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer ") and token_matches(header[7:].strip(), expected):
            request.scope.setdefault("state", {})[BEARER_STATE] = True
            return None
        if token_matches(request.cookies.get(TOKEN_COOKIE), expected):
            return None
        return _refuse(
            request,
            401,
            "this server needs its token: open the address `benchyard serve` printed "
            "(it ends in ?token=...)",
        )

    def _loopback_host(self, request: Request) -> bool:
        host = (request.headers.get("host") or "").lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name in LOOPBACK_HOSTS or name == self.config.host.lower()


def _enter(request: Request, token: str) -> Response:
    """The token was right: keep it in a cookie and go to the same address without it, so that
    it stays out of the history and of any Referer."""
    rest = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_PARAMETER]
    target = URL(path=request.url.path, query=urlencode(rest))
    response = RedirectResponse(str(target), status_code=303)
    response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict", path="/")
    return response


def _refuse(request: Request, status: int, message: str) -> Response:
    if wants_json(request):
        return JSONResponse({"error": message}, status_code=status)
    return HTMLResponse(_page(message), status_code=status)


def _page(message: str) -> str:
    from html import escape

    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>benchyard</title>"
        '<link rel=stylesheet href="/static/benchyard.css"></head><body><main>'
        f"<h1>benchyard</h1><p class=refused>{escape(message)}</p></main></body></html>"
    )


def wants_json(request: Request) -> bool:
    """A request under /api/, or one that asks for JSON rather than HTML."""
    if request.url.path.startswith("/api/"):
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept
