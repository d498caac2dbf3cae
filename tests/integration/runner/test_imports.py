"""Start-up imports only what the command and its benchmark use (issue 16): a run of a benchmark
that uses one check type leaves the other check modules and the other commands unimported; a
store already at the head revision is opened without Alembic."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchyard.store.store import Store
from tests.support import scenario, wrapped_run, write_benchmark

# `benchyard ARGS...` in this interpreter; at exit, every imported module's name goes to MODULES.
WRAPPER = (
    "import atexit, os, runpy, sys\n"
    "out = os.environ['MODULES']\n"
    "atexit.register(lambda: open(out, 'w').write('\\n'.join(sorted(sys.modules))))\n"
    "sys.argv = ['benchyard', *sys.argv[1:]]\n"
    "runpy.run_module('benchyard', run_name='__main__', alter_sys=True)\n"
)
UNUSED_CHECK_MODULES = (
    "benchyard.checks.code_exec",
    "benchyard.checks.json_checks",
    "benchyard.checks.numeric",
    "benchyard.checks.python_grader",
    "benchyard.checks.similarity",
    "benchyard.checks.static",
    "benchyard.checks.tests_check",
    "benchyard.formats",
    "benchyard.sre.check",
)
OTHER_COMMAND_MODULES = (
    "benchyard.cli.automation_commands",
    "benchyard.cli.report_commands",
    "benchyard.cli.web_commands",
)
# What a run of an in-process agent, without a schedule, a webhook or a judge, never needs.
UNUSED_BY_A_PLAIN_RUN = (
    "benchyard.agents.command",  # a command agent is told apart without importing its module
    "benchyard.agents.tool_server",  # a command agent's tools
    "benchyard.automation",  # nothing to announce without webhooks (cli/run_commands.py)
    "benchyard.automation.cron",
    "benchyard.automation.webhook_config",
    "benchyard.automation.webhooks",
    "benchyard.checks.judge",
    "benchyard.checks.patch_scan",
    "benchyard.cli.help_text",  # the top-level help's text
    "benchyard.providers.client",  # the judge's: imported only for a run with a judge
    "benchyard.providers.config",  # no providers in benchyard.yaml
    "benchyard.providers.http_server",
    "benchyard.providers.judge",
    "benchyard.store.figures",  # `run -q`'s exit status: counts and store/final_attempts.py
    "benchyard.store.outcomes",
    "croniter",
    "dateutil",
)
# What a run builds its report with, when it prints one.
REPORT_MODULES = ("benchyard.report.aggregated", "benchyard.report.build", "benchyard.report.model")
FORMAT_CHECK_MODULES = tuple(
    f"benchyard.formats.{name}.check"
    for name in ("bfcl", "gsm8k", "harbor", "humaneval", "ifeval", "mbpp", "swebench")
)


def imported_by(args: list[str], cwd: Path) -> set[str]:
    """The modules `benchyard ARGS...` had imported when it exited (it must exit 0)."""
    return set(wrapped_run(WRAPPER, args, cwd, "MODULES").split())


def test_run_imports_only_the_check_modules_its_benchmark_uses(tmp_path: Path, db_url: str) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "1"), scenario("two", "2")])
    run = ["run", str(bench), "--agent", "oracle", "-q", "--db", db_url]

    modules = imported_by(run, tmp_path)

    assert "benchyard.checks.text" in modules  # the one check type it uses
    assert sorted(modules.intersection(UNUSED_CHECK_MODULES)) == []
    assert sorted(modules.intersection(OTHER_COMMAND_MODULES)) == []
    assert sorted(modules.intersection(UNUSED_BY_A_PLAIN_RUN)) == []


def test_a_quiet_run_builds_no_report(tmp_path: Path, db_url: str) -> None:
    """`run -q` prints no report, so it builds none: its exit status comes from counts. A
    benchmark of benchyard's own format imports none of the importers either."""
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "1")])
    run = ["run", str(bench), "--agent", "oracle", "--db", db_url]

    quiet = imported_by([*run, "-q"], tmp_path)
    shown = imported_by(run, tmp_path)

    assert sorted(quiet.intersection(REPORT_MODULES)) == []
    assert sorted(m for m in quiet if m.startswith("benchyard.importers")) == []
    assert sorted(shown.intersection(REPORT_MODULES)) == sorted(REPORT_MODULES)


def test_a_format_check_imports_its_own_module_only(tmp_path: Path, db_url: str) -> None:
    checks = [{"type": "gsm8k_answer", "expected": "4"}]
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "#### 4", checks=checks)])

    modules = imported_by(["run", str(bench), "--agent", "oracle", "-q", "--db", db_url], tmp_path)

    assert sorted(modules.intersection(FORMAT_CHECK_MODULES)) == ["benchyard.formats.gsm8k.check"]


def test_runs_reads_a_store_at_head_without_alembic_or_the_report_models(
    tmp_path: Path, db_url: str
) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "1")])
    imported_by(["run", str(bench), "--agent", "oracle", "-q", "--db", db_url], tmp_path)

    modules = imported_by(["runs", "--db", db_url], tmp_path)

    assert "benchyard.cli.report_commands" in modules
    assert "alembic" not in modules
    assert "benchyard.report.model" not in modules
    assert "benchyard.cli.run_commands" not in modules
    assert "benchyard.automation.webhook_config" not in modules  # no `webhooks:` configured


def test_show_renders_a_run_without_the_importers(tmp_path: Path, db_url: str) -> None:
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "1")])
    imported_by(["run", str(bench), "--agent", "oracle", "-q", "--db", db_url], tmp_path)

    modules = imported_by(["show", "latest", "--db", db_url], tmp_path)

    assert "benchyard.report.render" in modules  # for its helpers
    assert sorted(m for m in modules if m.startswith("benchyard.importers")) == []
    assert "benchyard.automation.webhook_config" not in modules


def test_the_report_looks_for_the_note_the_patch_scan_writes() -> None:
    """report/flags.py keeps the marker as a value, so that a report does not import the scan."""
    from benchyard.checks.patch_scan import SUSPICIOUS_PATCH
    from benchyard.report import flags

    assert flags.SUSPICIOUS_PATCH == SUSPICIOUS_PATCH


def test_runs_reads_a_sqlite_store_without_sqlalchemy(tmp_path: Path) -> None:
    """`runs` reads a SQLite store at the head revision through the standard library's sqlite3
    (issue 27, item 3): SQLAlchemy is for PostgreSQL and for a store to create or migrate."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "1")])
    imported_by(["run", str(bench), "--agent", "oracle", "-q", "--db", url], tmp_path)

    for args in (["runs"], ["runs", "--format", "json"]):
        modules = imported_by([*args, "--db", url], tmp_path)

        assert "benchyard.store.lite" in modules
        assert sorted(m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic")) == []
        assert "benchyard.config" not in modules  # no benchyard.yaml to read


def test_show_reads_a_sqlite_store_without_sqlalchemy(tmp_path: Path) -> None:
    """`show` of a run, of one scenario's attempts, and as JSON, through sqlite3 on a SQLite store
    at the head revision (issue 27, item 3), printing what it printed through SQLAlchemy."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "1"), scenario("two", "x")])
    imported_by(["run", str(bench), "--agent", "oracle", "-q", "--db", url], tmp_path)

    for args in (["latest"], ["latest", "one"], ["latest", "--format", "json"]):
        modules = imported_by(["show", *args, "--db", url], tmp_path)

        assert "benchyard.store.store" in modules
        assert sorted(m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic")) == []
    show = [sys.executable, "-m", "benchyard", "show", "latest", "--format", "json", "--db", url]
    done = subprocess.run(show, cwd=tmp_path, capture_output=True, text=True, check=True)
    shown = json.loads(done.stdout)
    assert [(a["scenario_id"], a["verdict"]) for a in shown["attempts"]] == [
        ("one", "passed"),
        ("two", "passed"),
    ]
    assert {check["passed"] for a in shown["attempts"] for check in a["checks"]} == {True}


def test_runs_as_a_table_imports_no_pydantic(tmp_path: Path) -> None:
    """Typer below 0.29 (pyproject.toml's cap) parses options without pydantic, and the table
    needs none of the JSON models: pydantic's import and plugin scan are a third of `runs`."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "1")])
    imported_by(["run", str(bench), "--agent", "oracle", "-q", "--db", url], tmp_path)

    modules = imported_by(["runs", "--db", url], tmp_path)

    assert "benchyard.store.lite" in modules
    assert sorted(m for m in modules if m.split(".")[0] in ("pydantic", "pydantic_core")) == []


def test_runs_creates_a_missing_sqlite_store_through_sqlalchemy(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new' / 'store.db'}"

    modules = imported_by(["runs", "--db", url], tmp_path)

    assert "sqlalchemy" in modules
    assert (tmp_path / "new" / "store.db").is_file()


def test_a_run_on_a_sqlite_store_at_head_never_imports_sqlalchemy(tmp_path: Path) -> None:
    """The queue's claims and writes and the run's rows go through sqlite3 on a SQLite store at
    the head revision (issue 27, item 3: SQLAlchemy's import was half of a one-attempt run); the
    run is then read back through SQLAlchemy as any other."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    bench = write_benchmark(tmp_path / "bench", [scenario("one", "1"), scenario("two", "2")])
    run = ["run", str(bench), "--agent", "oracle", "--db", url]
    first = imported_by([*run, "-q"], tmp_path)  # creates the store

    for args in ([*run, "-q"], run):
        modules = imported_by(args, tmp_path)

        assert "benchyard.store.database" in modules
        assert sorted(m for m in modules if m.split(".")[0] in ("sqlalchemy", "alembic")) == []
    assert "sqlalchemy" in first
    store = Store._open_engine(url)
    runs = store.list_runs()
    assert [run.status for run in runs] == ["finished"] * 3
    assert [store.count_attempts(run.id) for run in runs] == [2, 2, 2]
    assert {a.verdict for run in runs for a in store.attempts(run.id)} == {"passed"}
    store.close()
