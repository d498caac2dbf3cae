"""Cross-site request forgery: every state-changing request must carry the value of this browser's
`benchyard_csrf` cookie (SameSite=Strict, set on its first visit) as the form field `csrf_token` or
the header `X-CSRF-Token`, and an Origin, when the browser sends one, of this server. A script let
in by `Authorization: Bearer` needs neither: no other site can make a browser send that header."""

from __future__ import annotations

import hmac
import secrets

from fastapi import HTTPException
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CSRF_COOKIE = "benchyard_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
STATE_KEY = "csrf_token"


class CsrfCookie:
    """Gives every browser its CSRF value: the one its cookie holds, or a new one set with the
    response. Pages read it from `request.state.csrf_token` to put it in their forms."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        existing = Request(scope).cookies.get(CSRF_COOKIE)
        value = existing if _well_formed(existing) else secrets.token_urlsafe(24)
        scope.setdefault("state", {})[STATE_KEY] = value

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start" and value != existing:
                headers = MutableHeaders(scope=message)
                headers.append(
                    "set-cookie",
                    f"{CSRF_COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict",
                )
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def _well_formed(value: str | None) -> bool:
    return (
        value is not None
        and 16 <= len(value) <= 64
        and value.replace("-", "").replace("_", "").isalnum()
    )


async def csrf_guard(request: Request) -> None:
    """A dependency of every state-changing route: refuse (403) a request without the CSRF value
    or from another origin."""
    if request.scope.get("state", {}).get("bearer"):
        return
    origin = request.headers.get("origin")
    if origin is not None and origin != _own_origin(request):
        raise HTTPException(403, f"refused: a request from another origin ({origin})")
    cookie = request.cookies.get(CSRF_COOKIE)
    given = request.headers.get(CSRF_HEADER)
    if given is None and _is_form(request):
        value = (await request.form()).get(CSRF_FIELD)
        given = value if isinstance(value, str) else None
    if not cookie or not given or not hmac.compare_digest(cookie, given):
        raise HTTPException(403, "refused: the form's CSRF token is missing or does not match")


def _own_origin(request: Request) -> str:
    return f"{request.url.scheme}://{request.headers.get('host', '')}"


def _is_form(request: Request) -> bool:
    kind = request.headers.get("content-type", "")
    return kind.startswith(("application/x-www-form-urlencoded", "multipart/form-data"))
