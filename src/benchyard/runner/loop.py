"""Running benchyard's async work: one entry point, so every command that starts agents or
sandboxed checks waits for its children the same cheap way."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_async(work: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, with children watched through pidfds: Python 3.11 otherwise waits for each
    child in a thread of its own (3.12 uses pidfds by itself)."""
    if sys.version_info < (3, 12) and hasattr(os, "pidfd_open"):
        with contextlib.suppress(OSError, NotImplementedError):
            os.close(os.pidfd_open(os.getpid()))
            asyncio.set_child_watcher(asyncio.PidfdChildWatcher())
    return asyncio.run(work)
