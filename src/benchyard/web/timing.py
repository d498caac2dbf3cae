"""A `Server-Timing` header on every response: how long the server took to start answering, in
milliseconds (shown by a browser's developer tools; read by bench/web.py)."""

from __future__ import annotations

import time

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class ServerTiming:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def send_with_timing(message: Message) -> None:
            if message["type"] == "http.response.start":
                took = (time.perf_counter() - started) * 1000
                MutableHeaders(scope=message)["server-timing"] = f"app;dur={took:.2f}"
            await send(message)

        await self.app(scope, receive, send_with_timing)
