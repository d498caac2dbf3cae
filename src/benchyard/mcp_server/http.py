"""Serving the MCP server over streamable HTTP: loopback by default, answering only to a loopback
Host (no DNS rebinding); on every address, loopback included, every request needs
`Authorization: Bearer TOKEN` (compared by its SHA-256, in constant time): anything on this
machine can reach a loopback port, an agent given the network among them."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from benchyard.web.config import is_loopback
from benchyard.web.tokens import token_matches

LOOPBACK_HOSTS = ["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]", "[::1]:*"]


class BearerToken:
    """Refuse (401) every HTTP request without the token."""

    def __init__(self, app: ASGIApp, token_sha256: str) -> None:
        self.app = app
        self.token_sha256 = token_sha256

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = None
            for name, value in scope.get("headers", []):
                if name == b"authorization":
                    text = value.decode("latin-1")
                    if text.lower().startswith("bearer "):
                        given = text[7:].strip()
            if not token_matches(given, self.token_sha256):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b'{"error": "token required"}'})
                return
        await self.app(scope, receive, send)


def http_app(server: object, host: str, token_sha256: str | None) -> ASGIApp:
    """The ASGI app of `server` (an MCPServer) for `host`; every host needs a token."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.transport_security import TransportSecuritySettings

    assert isinstance(server, MCPServer)
    if token_sha256 is None:
        raise ValueError(f"serving MCP on {host} needs a token (--token or BENCHYARD_MCP_TOKEN)")
    security = (
        TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=LOOPBACK_HOSTS,
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
        if is_loopback(host)
        else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    app: ASGIApp = server.streamable_http_app(transport_security=security, host=host)
    return BearerToken(app, token_sha256)
