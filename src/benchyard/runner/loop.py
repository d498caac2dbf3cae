"""Running benchyard's async work: one entry point, so every command that starts agents or
sandboxed checks waits for its children the same cheap way, with room for their connections."""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from benchyard.startup import release_collection

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

T = TypeVar("T")
OPEN_FILES = 65536  # enough for -j 100; some programs walk every possible descriptor
LEFTOVER_GRACE_SEC = 15.0  # how long tasks still running at the end may take to end when cancelled


def run_async(work: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, with children watched through pidfds: Python 3.11 otherwise waits for each
    child in a thread of its own (3.12 uses pidfds by itself)."""
    watched = False
    if sys.version_info < (3, 12) and hasattr(os, "pidfd_open"):
        with contextlib.suppress(OSError, NotImplementedError):
            os.close(os.pidfd_open(os.getpid()))
            asyncio.set_child_watcher(asyncio.PidfdChildWatcher())
            watched = True
    raise_open_files_limit()
    release_collection()  # held while the command started, if it was (benchyard/startup.py)
    runner = asyncio.Runner(loop_factory=_current_event_loop)
    try:
        return runner.run(work)
    finally:
        _close(runner)
        if watched:  # the watcher belongs to the loop that just closed: let others make theirs
            asyncio.set_child_watcher(None)  # type: ignore[arg-type]  # None resets the default


def _close(runner: asyncio.Runner) -> None:
    """Close the runner's loop, cancelling what still runs on it; a task that does not end
    within LEFTOVER_GRACE_SEC of its cancellation (one the watchdog left behind) is abandoned
    with the loop, so that the command ends all the same."""
    loop = runner.get_loop()
    if loop.is_closed():
        return
    leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in leftovers:
        task.cancel()
    if leftovers:
        loop.run_until_complete(asyncio.wait(leftovers, timeout=LEFTOVER_GRACE_SEC))
    if all(task.done() for task in leftovers):
        runner.close()
    else:
        with contextlib.suppress(Exception):
            loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
    asyncio.set_event_loop(None)


def _current_event_loop() -> asyncio.AbstractEventLoop:
    """A new loop (new_event_loop), made the thread's current one: the child watcher that
    run_async sets attaches to it, as it does to asyncio.run's."""
    loop = new_event_loop()
    asyncio.set_event_loop(loop)
    return loop


def raise_open_files_limit() -> None:
    """The soft limit on open files up to the hard one: each attempt holds pipes, a tool server
    (up to 32 connections) and store connections, and 1,024 runs out at `-j 16`."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, OPEN_FILES)
    if soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


class ReArmingSelector(selectors.EpollSelector):
    """An epoll selector that re-registers a descriptor with the kernel whenever its key changes.

    The standard one only replaces a key's data when its events stay the same. If the descriptor
    was closed while still registered (epoll then forgets it) and its number was reused by a new
    pipe or pidfd, the loop takes the stale key for the new descriptor's and never registers it:
    its output or its child's exit is never seen, and an attempt waits for ever. Unregistering and
    registering again on each change of a key (rare: a reader or writer added or replaced) makes
    that impossible, for two system calls."""

    def modify(
        self, fileobj: FileDescriptorLike, events: int, data: Any = None
    ) -> selectors.SelectorKey:
        self.unregister(fileobj)  # KeyError when it is not registered, as the standard one
        return self.register(fileobj, events, data)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """An event loop whose selector cannot lose a reused descriptor (ReArmingSelector)."""
    if hasattr(selectors, "EpollSelector"):
        return asyncio.SelectorEventLoop(ReArmingSelector())
    return asyncio.new_event_loop()
