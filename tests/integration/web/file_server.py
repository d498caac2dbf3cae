"""A plain file server, as someone given a static copy would run it: `python -m http.server`
in a process of its own, on a free loopback port (no headers of benchyard's own)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.integration.web.support import free_port


@contextmanager
def file_server(directory: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "-d", str(directory)]
    process = subprocess.Popen(
        [*command, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for(url + "/", process, "the file server")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def wait_for(url: str, process: subprocess.Popen[Any], what: str) -> None:
    """Until `url` answers at all; fails once `process` has ended, or after a minute."""
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url, timeout=5)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"{what} did not start") from None
            time.sleep(0.1)
