"""benchyard's event loop cannot lose a descriptor whose number was reused while a stale key for
it was still held by the selector (runner/loop.py's ReArmingSelector)."""

from __future__ import annotations

import asyncio
import os
import socket

from benchyard.runner.loop import run_async
from tests.support import pipe_at


async def _reused_number_is_watched() -> bool:
    loop = asyncio.get_running_loop()
    listener = socket.socket()
    number = listener.fileno()
    loop.add_reader(listener, lambda: None)
    listener.close()  # closed while registered: epoll forgets it, the selector does not
    reused, write_end = pipe_at(number)
    seen = asyncio.Event()
    try:
        loop.add_reader(reused, seen.set)  # the stale key is taken for this descriptor's
        os.write(write_end, b"x")
        await asyncio.wait_for(seen.wait(), 30)
        return True
    finally:
        loop.remove_reader(reused)
        os.close(reused)
        os.close(write_end)


def test_a_reader_on_a_reused_number_fires_on_benchyards_loop() -> None:
    assert run_async(_reused_number_is_watched())
