"""HumanEval's reliability guard (formats/program.py), run by a real interpreter before the code
that HumanEval's official guard would stop: what it disables fails, imported before the guard or
after it, and nothing else changes."""

from __future__ import annotations

import subprocess
import sys

from benchyard.formats.program import RELIABILITY_GUARD


def run_guarded(code: str, before: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-c", before + RELIABILITY_GUARD + code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_guard_is_one_line_that_leaves_no_name_behind() -> None:
    assert RELIABILITY_GUARD.count("\n") == 1 and RELIABILITY_GUARD.endswith("\n")
    done = run_guarded("print(sorted(n for n in globals() if not n.startswith('__')))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_what_the_official_guard_disables_is_disabled() -> None:
    checks = (
        "import os, sys, builtins",
        "assert os.system is None and os.kill is None and os.remove is None and os.chdir is None",
        "assert builtins.exit is None and builtins.quit is None and builtins.help is None",
        "assert os.environ['OMP_NUM_THREADS'] == '1'",
        "assert sys.modules['resource'] is None and sys.modules['psutil'] is None",
        "import shutil, subprocess",
        "assert shutil.rmtree is None and shutil.move is None and shutil.chown is None",
        "assert subprocess.Popen is None",
        "assert shutil.copyfile is not None and subprocess.list2cmdline('a') == 'a'",
        "from shutil import rmtree",
        "assert rmtree is None",
        "print('guarded')",
    )
    done = run_guarded("\n".join(checks))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "guarded\n"


def test_a_reloaded_module_gets_its_functions_back_as_under_the_official_guard() -> None:
    done = run_guarded(
        "import importlib, shutil\nassert shutil.rmtree is None\n"
        "importlib.reload(shutil)\nprint(callable(shutil.rmtree))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n"


def test_a_module_imported_before_the_guard_is_disabled_too() -> None:
    done = run_guarded("assert subprocess.Popen is None\nprint('ok')", before="import subprocess\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"


def test_the_guard_leaves_the_import_system_once_both_modules_are_disabled() -> None:
    code = (
        "import sys\n"
        "print(len(sys.meta_path))\n"
        "import tempfile, subprocess\n"  # tempfile imports shutil
        "print(len(sys.meta_path))\n"
        "try:\n"
        "    subprocess.run(['true'])\n"
        "except TypeError as error:\n"
        "    print('refused:', error)\n"
    )
    done = run_guarded(code)
    assert done.returncode == 0, done.stderr
    before, after, refused = done.stdout.splitlines()
    assert int(before) == int(after) + 1
    assert refused.startswith("refused:") and "NoneType" in refused
