"""The CLI end to end, as a user types it: init, benchmarks, validate, verify, run, runs, show, report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark

REPO = Path(__file__).resolve().parents[2]


def test_init_writes_a_config_whose_agent_runs(cli: Cli, store: Store) -> None:
    result = cli("init", db=False)
    assert result.exit_code == 0
    assert (cli.cwd / "benchyard.yaml").is_file()
    assert "next: benchyard run starter --agent example" in result.output
    again = cli("init", db=False)
    assert "kept existing" in again.output
    run = cli("run", "starter", "--agent", "example", "--limit", "3", "-q")
    assert run.exit_code == 0, run.output
    attempts = store.attempts(store.resolve_run("latest").id)
    assert len(attempts) == 3
    assert all(a.answer and a.answer.startswith("I do not know yet") for a in attempts)


def test_benchmarks_lists_builtin_and_local(tmp_path: Path, cli: Cli) -> None:
    write_benchmark(cli.cwd / "mine", [scenario("a", "x")], name="mine")
    result = cli("benchmarks", db=False)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert any(line.startswith("starter") and "built-in" in line for line in lines)
    assert any(
        line.startswith("mine") and "local" in line and "1 scenarios" in line for line in lines
    )


def test_validate_and_verify_the_starter_library(cli: Cli) -> None:
    validated = cli("validate", "starter", db=False)
    assert validated.exit_code == 0
    assert validated.output.startswith("ok: starter")
    verified = cli("verify", "starter", db=False)
    assert verified.exit_code == 0, verified.output
    assert verified.output.strip().endswith("scenarios verified, 0 broken")


def test_verify_reports_a_broken_reference(tmp_path: Path, cli: Cli) -> None:
    bench = write_benchmark(
        tmp_path / "b",
        [
            scenario("good", "4"),
            {
                "id": "bad",
                "stimulus": "2+2?",
                "checks": [{"type": "numeric", "value": 4}],
                "reference": "5",
            },
            {"id": "none", "stimulus": "?", "checks": [{"type": "equals", "value": "x"}]},
        ],
    )
    result = cli("verify", str(bench), db=False)
    assert result.exit_code == 1
    assert "broken: bad: numeric: final number 5" in result.output
    assert "broken: none: no reference" in result.output
    assert "3 scenarios verified, 2 broken" in result.output


def test_starter_library_shape() -> None:
    from benchyard.spec.loader import load_benchmark

    starter = load_benchmark("starter")
    categories: dict[str, int] = {}
    for s in starter.scenarios:
        categories[s.category] = categories.get(s.category, 0) + 1
    assert len(starter.scenarios) >= 40
    assert len(categories) >= 5
    assert {"math", "json", "instructions", "summarisation", "extraction", "multi_turn"} <= set(
        categories
    )


@pytest.mark.parametrize(
    "agent", ["python3 examples/agents/rules_agent.py", "bash examples/agents/rules_agent.sh"]
)
def test_example_agents_pass_every_easy_case(agent: str, db_url: str) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchyard",
            "run",
            "starter",
            "--agent-cmd",
            agent,
            "--filter",
            "difficulty:easy",
            "-q",
            "--db",
            db_url,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    store = Store.open(db_url)
    attempts = store.attempts(store.resolve_run("latest").id)
    store.close()
    assert len(attempts) >= 8
    failing = {a.scenario_id: a.cause for a in attempts if a.verdict != "passed"}
    assert failing == {}


def test_oracle_passes_the_starter_library(cli: Cli) -> None:
    result = cli("run", "starter", "--agent", "oracle")
    assert result.exit_code == 0
    assert "accuracy         100.0%" in result.output
    report = json.loads(cli("report", "latest", "--format", "json").output)
    assert report["summary"]["failed"] == 0
    assert report["summary"]["task_count"] >= 40
    assert report["run"]["benchmark"]["hash"].startswith("sha256:")


def test_filters_limit_and_epochs(tmp_path: Path, cli: Cli, store: Store) -> None:
    bench = write_benchmark(
        tmp_path / "b",
        [
            scenario("m1", "1", category="math", tags=["quick"]),
            scenario("m2", "2", category="math"),
            scenario("t1", "t", category="text", tags=["quick"], difficulty="easy"),
            scenario("t2", "t", category="text"),
        ],
    )

    def ran(*options: str) -> list[tuple[str, int]]:
        cli("run", str(bench), "--agent", "oracle", "-q", *options)
        return sorted(
            (a.scenario_id, a.epoch) for a in store.attempts(store.resolve_run("latest").id)
        )

    assert ran("--filter", "category:math") == [("m1", 1), ("m2", 1)]
    assert ran("--filter", "tag:quick") == [("m1", 1), ("t1", 1)]
    assert ran("--filter", "tag:quick", "--filter", "category:text") == [("t1", 1)]
    assert ran("--filter", "id:t*", "--filter", "id:m2") == [("m2", 1), ("t1", 1), ("t2", 1)]
    assert ran("--filter", "difficulty:easy") == [("t1", 1)]
    assert ran("--filter", "quick") == [("m1", 1), ("t1", 1)]
    assert ran("--limit", "2", "--epochs", "3") == [
        ("m1", 1),
        ("m1", 2),
        ("m1", 3),
        ("m2", 1),
        ("m2", 2),
        ("m2", 3),
    ]
    bad = cli("run", str(bench), "--agent", "oracle", "--filter", "colour:red")
    assert bad.exit_code == 2
    assert "unknown filter key 'colour'" in bad.output
    empty = cli("run", str(bench), "--agent", "oracle", "--filter", "category:nothing")
    assert empty.exit_code == 2
    assert "no scenario of fixture-bench matches" in empty.output


def test_run_records_commit_dirty_flag_and_settings(tmp_path: Path, cli: Cli, store: Store) -> None:
    repo = tmp_path / "agent-repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "agent.sh").write_text("echo x\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    bench = write_benchmark(tmp_path / "b", [scenario("a", "x")])

    cli(
        "run",
        str(bench),
        "--agent-cmd",
        f"sh {repo / 'agent.sh'}",
        "--agent-repo",
        str(repo),
        "-q",
        "-j",
        "3",
    )
    clean = store.resolve_run("latest")
    assert (clean.agent_commit, clean.agent_dirty) == (head, False)
    assert clean.settings["concurrency"] == 3
    assert clean.benchmark_name == "fixture-bench"
    assert clean.host and clean.benchyard_version

    (repo / "agent.sh").write_text("echo y\n")
    cli("run", str(bench), "--agent", "oracle", "--agent-repo", str(repo), "-q")
    assert store.resolve_run("latest").agent_dirty is True

    cli("run", str(bench), "--agent", "oracle", "--agent-repo", str(tmp_path), "-q")
    outside = store.resolve_run("latest")
    assert (outside.agent_commit, outside.agent_dirty) == (None, None)

    listing = cli("runs").output
    assert head[:10] + " " in listing or head[:10] in listing
    assert listing.index(outside.id[:8]) < listing.index(clean.id[:8])


def test_show_and_report_formats(tmp_path: Path, cli: Cli) -> None:
    bench = write_benchmark(tmp_path / "b", [scenario("ok", "yes"), scenario("bad", "<b>no</b>")])
    cli("run", str(bench), "--agent-cmd", "echo yes", "-q")
    overview = cli("show", "latest")
    assert overview.exit_code == 0
    assert "bad" in overview.output and "failed" in overview.output
    detail = cli("show", "latest", "bad")
    assert "✗ equals" in detail.output
    assert "trajectory:" in detail.output
    missing = cli("show", "latest", "nope")
    assert "has no attempt of scenario 'nope'" in missing.output

    out = tmp_path / "report.md"
    written = cli("report", "latest", "--format", "md", "-o", str(out))
    assert written.exit_code == 0
    text = out.read_text()
    assert "| 50.0% |" in text
    assert "**bad**" in text
    assert "\\<b\\>no\\</b\\>" in text
    table = cli("report", "latest")
    assert "accuracy" in table.output and "1/2" in table.output
    bad_format = cli("report", "latest", "--format", "xml")
    assert bad_format.exit_code == 2
    unknown = cli("report", "ffffffff")
    assert unknown.exit_code == 2
    assert "no run matches 'ffffffff'" in unknown.output


def test_unreachable_store_is_one_clear_line(tmp_path: Path) -> None:
    bench = write_benchmark(tmp_path / "b", [scenario("a", "x")])
    result = Cli("postgresql://nobody:secret@127.0.0.1:1/none", tmp_path)(
        "run", str(bench), "--agent", "oracle"
    )
    assert result.exit_code == 2
    assert result.output.startswith(
        "error: cannot open the store postgresql+psycopg://nobody:***@127.0.0.1:1/none"
    )
    assert "secret" not in result.output


SUPPORTED = (
    "benchyard supports sqlite (sqlite:///path/to/store.db) and postgresql "
    "(postgresql://user@host/database)"
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (
            "mysql://me:secret@db/runs",
            f"error: unsupported store 'mysql://me:***@db/runs': {SUPPORTED}",
        ),
        ("garbage", f"error: 'garbage' is not a database URL; {SUPPORTED}"),
        (
            "postgresql://me:secret@db:port/runs",
            f"error: 'postgresql://me:***@db:port/runs' is not a database URL; {SUPPORTED}",
        ),
        (
            "postgresql+asyncpg://me@db/runs",
            f"error: unsupported store 'postgresql+asyncpg://me@db/runs': {SUPPORTED}",
        ),
    ],
)
def test_a_store_url_benchyard_cannot_use_is_one_line(
    tmp_path: Path, url: str, expected: str
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchyard", "runs", "--db", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stdout, result.stderr) == (2, "", expected + "\n")


def test_a_postgresql_server_that_is_down_is_one_line(tmp_path: Path) -> None:
    url = "postgresql://me:secret@127.0.0.1:1/runs"
    result = subprocess.run(
        [sys.executable, "-m", "benchyard", "runs", "--db", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        "error: cannot open the store postgresql+psycopg://me:***@127.0.0.1:1/runs: "
    )
    assert "refused" in line
    assert "secret" not in line


def test_a_sqlite_store_whose_directory_cannot_be_created_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    url = f"sqlite:///{blocker}/sub/store.db"
    result = subprocess.run(
        [sys.executable, "-m", "benchyard", "runs", "--db", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: cannot open the store {url}: cannot create its directory "
        f"({blocker} is not a directory)\n"
    )


def test_a_damaged_store_is_one_line(tmp_path: Path) -> None:
    """A SQLite store at the newest revision whose runs table is gone (a hand-edited file)."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    store = Store.open(url)
    with store.engine.begin() as connection:
        connection.execute(text("DROP TABLE runs"))
    store.close()
    result = subprocess.run(
        [sys.executable, "-m", "benchyard", "runs", "--db", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "error: the store failed: no such table: runs\n"


def test_help_and_version() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchyard", "--help"], capture_output=True, text=True
    )
    assert result.returncode == 0
    for command in (
        "init",
        "validate",
        "benchmarks",
        "verify",
        "run",
        "rerun",
        "runs",
        "show",
        "report",
    ):
        assert f"  {command} " in result.stdout
    version = subprocess.run(
        [sys.executable, "-m", "benchyard", "--version"], capture_output=True, text=True
    )
    assert version.stdout.startswith("benchyard 0.")
