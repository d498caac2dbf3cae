"""Registering a page twice: at its path (HTML, or JSON when asked) and under /api/ (JSON)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter

Handler = Callable[..., Any]


def page(
    router: APIRouter, path: str, methods: tuple[str, ...] = ("GET",)
) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        router.add_api_route(path, handler, methods=list(methods), include_in_schema=False)
        router.add_api_route("/api" + path, handler, methods=list(methods))
        return handler

    return register
