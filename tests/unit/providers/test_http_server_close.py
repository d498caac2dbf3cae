"""Closing a LoopbackServer frees its descriptors only once the loop has let go of them: a pipe or
pidfd opened right after `close()` starts, under the same number, is watched like any other."""

from __future__ import annotations

import asyncio
import os

from benchyard.providers.http_server import LoopbackServer, Request, Responder
from tests.support import pipe_at


async def _nothing(request: Request, responder: Responder) -> None:
    await responder.send(200, {})


async def test_a_descriptor_reused_while_the_server_closes_is_still_watched() -> None:
    """The tool server's close and an attempt's pidfd, as they met under load: the listener's
    number is freed while its cancelled accept still holds a key on the loop's selector; a reader
    added for the new descriptor under that number must be registered with epoll all the same."""
    loop = asyncio.get_running_loop()
    server = LoopbackServer(_nothing)
    await server.listen_tcp()
    await asyncio.sleep(0)  # the accept task is waiting on the listener
    number = server.listeners[0].fileno()
    closing = asyncio.ensure_future(server.close())
    await asyncio.sleep(0)  # close() ran up to its first wait: the listener is closed
    reused, write_end = pipe_at(number)
    seen = asyncio.Event()
    try:
        loop.add_reader(reused, seen.set)
        await closing
        os.write(write_end, b"x")
        await asyncio.wait_for(seen.wait(), 30)
    finally:
        loop.remove_reader(reused)
        os.close(reused)
        os.close(write_end)
