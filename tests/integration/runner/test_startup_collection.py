"""`benchyard run` holds garbage collection from its entry point until its event loop starts
(benchyard/startup.py), collects again while attempts run, and at exit hands what start-up built
back to the collector, so that the store's connections are closed and SQLite's write-ahead log is
folded into the database as before. Other commands leave collection alone."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import scenario, wrapped_run, write_benchmark

# `benchyard ARGS...` in this interpreter; at exit, OUT gets what the collector's state was when
# the event loop was about to start, just after, and at exit (this handler runs last).
WRAPPER = (
    "import atexit, gc, os, runpy, sys\n"
    "import benchyard.startup as startup\n"
    "seen = {}\n"
    "release = startup.release_collection\n"
    "def released():\n"
    "    seen['before the loop'] = gc.isenabled()\n"
    "    release()\n"
    "    seen['in the loop'] = (gc.isenabled(), gc.get_freeze_count() > 0)\n"
    "startup.release_collection = released\n"
    "def record():\n"
    "    seen['at exit'] = (gc.isenabled(), gc.get_freeze_count())\n"
    "    open(os.environ['OUT'], 'w').write(repr(seen))\n"
    "atexit.register(record)\n"
    "sys.argv = ['benchyard', *sys.argv[1:]]\n"
    "runpy.run_module('benchyard', run_name='__main__', alter_sys=True)\n"
)


def collection_seen(args: list[str], cwd: Path) -> dict[str, object]:
    seen: dict[str, object] = ast.literal_eval(wrapped_run(WRAPPER, args, cwd, "OUT"))
    return seen


def test_a_run_collects_once_its_loop_starts_and_closes_its_store(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "1")])
    run = ["run", str(bench), "--agent", "oracle", "-q", "--db", f"sqlite:///{store}"]

    seen = collection_seen(run, tmp_path)

    assert seen == {
        "before the loop": False,  # held since the entry point
        "in the loop": (True, True),  # collecting, start-up's objects frozen
        "at exit": (True, 0),  # handed back to the collector
    }
    assert store.is_file()
    assert not Path(f"{store}-wal").exists()  # the store's connection closed, its log folded


def test_other_commands_leave_collection_alone(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"

    seen = collection_seen(["runs", "--db", url], tmp_path)

    assert seen == {"at exit": (True, 0)}
