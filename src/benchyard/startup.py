"""Garbage collection held while a command that runs attempts starts (issue 27, item 3).

Start-up imports hundreds of modules and builds classes, models and SQLAlchemy tables: objects
that live as long as the process. Each allocation counts towards the next collection, so the
collector runs many times over start-up (including full collections over everything imported so
far) and frees nearly nothing. `hold_collection` turns it off at the command line's entry;
`release_collection`, called when the run's event loop starts, freezes what start-up built
(gc.freeze: never examined again) and turns collection back on, so that a run of any length
collects its garbage as usual. At exit the frozen objects are handed back to the collector
(gc.unfreeze), so that what only collection frees, such as the store's connections in reference
cycles, is still closed at shutdown (SQLite folds its write-ahead log then).

A process that never held collection (a test, the web server, any other command) is left alone:
releasing then does nothing."""

from __future__ import annotations

import atexit
import gc

_held = False


def hold_collection() -> None:
    """Turn garbage collection off until `release_collection`."""
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release_collection() -> None:
    """Freeze what was built while collection was held, and collect again from now on."""
    global _held
    if not _held:
        return
    _held = False
    gc.freeze()
    atexit.register(gc.unfreeze)
    gc.enable()
