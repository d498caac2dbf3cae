"""`benchyard serve`: the web UI over the store, through the same library as these commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchyard.cli.errors import handle_errors
from benchyard.cli.options import DbOption


@handle_errors
def serve(
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on (every address needs the token, loopback included).",
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", "-p", min=1, max=65535)] = 8765,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="BENCHYARD_WEB_TOKEN",
            help="Require this token instead of a new one (loopback: made at each start and "
            "printed in the address) or the one stored for this project (other addresses: "
            "hashed, in .benchyard/web-token.sha256).",
        ),
    ] = None,
    new_token: Annotated[
        bool,
        typer.Option(
            "--new-token",
            help="Other addresses: make a new token (printed once) in place of the stored one.",
        ),
    ] = False,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only", help="Serve no route that changes anything (queue, edit, cancel)."
        ),
    ] = False,
    allow_unsandboxed: Annotated[
        bool,
        typer.Option(
            "--allow-unsandboxed",
            help="Let the queue page queue runs with --sandbox none --allow-unsandboxed (the "
            "agent's code on this host, as the worker's user), and rerun such runs. Off: refused.",
        ),
    ] = False,
    benchmarks: Annotated[
        list[Path] | None,
        typer.Option(
            "--benchmarks",
            help="Directories to look for benchmarks in (default: the current one); repeatable.",
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Serve the web UI: runs, attempts, comparisons, benchmarks and the queue (docs/web.md)."""
    import uvicorn

    from benchyard.cli.context import load_project, open_store
    from benchyard.web.app import create_app
    from benchyard.web.config import WebConfig, is_loopback
    from benchyard.web.tokens import TOKEN_FILE, store_hash, stored_hash, token_hash
    from benchyard.web.tokens import new_token as make_token

    config = load_project()
    store = open_store(db, config)
    token_file = config.base_dir / TOKEN_FILE
    hashed: str | None = token_hash(token) if token else None
    shown_token: str | None = None
    if hashed is None and is_loopback(host):  # a new one each start, kept nowhere (as Jupyter)
        shown_token = make_token()
        hashed = token_hash(shown_token)
    elif hashed is None:
        hashed = None if new_token else stored_hash(token_file)
        if hashed is None:
            shown_token = make_token()
            hashed = token_hash(shown_token)
            store_hash(token_file, hashed)
    web = WebConfig(
        store_url=store.url,
        project=config,
        host=host,
        port=port,
        read_only=read_only,
        token_sha256=hashed,
        benchmark_dirs=tuple(benchmarks or [Path.cwd()]),
        allow_unsandboxed=allow_unsandboxed,
    )
    app = create_app(web, store=store)
    shown_host = f"[{host}]" if ":" in host else host
    address = f"http://{shown_host}:{port}/"
    mode = " (read-only)" if read_only else ""
    if shown_token and is_loopback(host):
        typer.echo(
            f"benchyard serves {address}?token={shown_token}{mode}\n"
            "  open this address once (it keeps the token in a cookie); scripts send "
            "`Authorization: Bearer TOKEN`; a new token is made at each start",
            err=True,
        )
    elif shown_token:
        typer.echo(
            f"benchyard serves {address}?token={shown_token}{mode}\n"
            f"  the token is shown this once and kept hashed in {token_file}; "
            "`benchyard serve --new-token` makes another",
            err=True,
        )
    else:
        typer.echo(
            f"benchyard serves {address} (open it with ?token=YOUR_TOKEN once){mode}", err=True
        )
    try:
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level="warning",
            proxy_headers=False,
            server_header=False,
            timeout_graceful_shutdown=3,
        )
    finally:
        store.close()
