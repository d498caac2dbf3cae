"""The serving model's own tokenizer, where its server exposes one: `POST /tokenize` at the
server's root, as llama.cpp's server (`{"content": ...}` -> `{"tokens": [...]}`) and vLLM's
(`{"model": ..., "prompt": ...}` -> `{"count": N, ...}`) answer it, else llama-cpp-python's
`POST /extras/tokenize/count` (`{"input": ...}` -> `{"count": N}`). One request carries every
shape's fields (each server reads its own). Counting a reply's text with it checks the usage the
endpoint reports more tightly than the bounds from characters and words (plausibility.py); a
server without one (404, an error, anything unreadable) is asked once, then never again.
"""

from __future__ import annotations

from typing import Any

from benchyard.providers.config import ModelConfig, ProviderConfigError
from benchyard.providers.endpoint import request_headers

TIMEOUT_SEC = 10.0
PATHS = ("/tokenize", "/extras/tokenize/count")


class EndpointTokenizer:
    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self.available: bool | None = None  # None: not asked yet
        self.path: str | None = None  # the route that answered
        self._http: Any = None

    async def count(self, text: str) -> int | None:
        """The number of tokens of `text` (no special tokens added where the server lets it
        say so), or None without a tokenizer."""
        if self.available is False or not text:
            return None
        for path in (self.path,) if self.path else PATHS:
            found = await self._ask(path, text)
            if found is not None:
                self.path, self.available = path, True
                return found
        if self.available is None:
            self.available = False
        return None

    async def _ask(self, path: str, text: str) -> int | None:
        import httpx

        provider = self.config.provider
        try:
            if self._http is None:
                self._http = httpx.AsyncClient(
                    headers=request_headers(provider), timeout=httpx.Timeout(TIMEOUT_SEC)
                )
            response = await self._http.post(
                provider.url_for(path, at_root=True),
                json={
                    "content": text,
                    "add_special": False,
                    "model": self.config.model,
                    "prompt": text,
                    "add_special_tokens": False,
                    "input": text,
                },
            )
            return _count_in(response.json()) if response.status_code < 400 else None
        except (httpx.HTTPError, ProviderConfigError, ValueError):
            return None

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None


def _count_in(body: Any) -> int | None:
    if not isinstance(body, dict):
        return None
    count = body.get("count")
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        return count
    tokens = body.get("tokens")
    return len(tokens) if isinstance(tokens, list) else None
