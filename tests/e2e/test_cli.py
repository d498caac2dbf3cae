"""The CLI end to end, as a user types it: init, benchmarks, validate, verify, run, runs, show, report."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from benchyard.report.schema import validate_report
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
        line.startswith("mine") and "local" in line and "1 scenario " in line for line in lines
    )


def test_validate_and_verify_the_starter_library(storeless_cli: Cli) -> None:
    validated = storeless_cli("validate", "starter")
    assert validated.exit_code == 0
    assert validated.output.startswith("ok: starter")
    verified = storeless_cli("verify", "starter")
    assert verified.exit_code == 0, verified.output
    assert verified.output.strip().endswith("scenarios verified, 0 broken")


def test_verify_reports_a_broken_reference(tmp_path: Path, storeless_cli: Cli) -> None:
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
    result = storeless_cli("verify", str(bench))
    assert result.exit_code == 1
    assert "broken: bad: numeric: final number 5" in result.output
    assert "broken: none: no reference" in result.output
    assert "3 scenarios verified, 2 broken" in result.output


def test_starter_library_shape() -> None:
    from benchyard.benchmarks.loader import load_benchmark

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
    assert missing.exit_code == 2  # docs/exit-codes.md: an unknown scenario is refused
    assert "has no scenario 'nope' (its scenarios: bad, ok)" in missing.stderr

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
            f"error: 'postgresql+psycopg://me:***@db:port/runs' is not a database URL; {SUPPORTED}",
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


# ---- the first hour (issue #9): exit codes, JSON listings, figures, flags, provenance, wording --


def _git(repo: Path, *args: str) -> str:
    base = ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a"]
    return subprocess.run([*base, *args], capture_output=True, text=True, check=True).stdout


def test_run_exits_for_ci_on_a_threshold_and_when_nothing_was_graded(
    tmp_path: Path, cli: Cli
) -> None:
    bench = write_benchmark(tmp_path / "b", [scenario("yes", "yes"), scenario("no", "no")])
    half = cli("run", str(bench), "--agent-cmd", "echo yes", "-q")
    assert half.exit_code == 0, half.output
    under = cli("run", str(bench), "--agent-cmd", "echo yes", "-q", "--fail-under", "0.9")
    assert under.exit_code == 1
    assert "below threshold: accuracy 50.0% is under --fail-under 90.0% (1/2 passed)" in (
        under.stderr
    )
    assert (
        cli("run", str(bench), "--agent-cmd", "echo yes", "-q", "--fail-under", "0.5").exit_code
        == 0
    )
    bound = cli(
        "run", str(bench), "--agent-cmd", "echo yes", "-q",
        "--fail-under", "0.5", "--fail-under-on", "lower-bound",
    )  # fmt: skip
    assert bound.exit_code == 1
    assert "the lower bound of accuracy's 95% interval 9.5% is under" in bound.stderr
    # The oracle has no reference to replay: every attempt is an error, nothing is graded.
    unreferenced = write_benchmark(
        tmp_path / "u", [{"id": "a", "stimulus": "?", "checks": [{"type": "equals", "value": "x"}]}]
    )
    errors = cli("run", str(unreferenced), "--agent", "oracle", "-q")
    assert errors.exit_code == 3
    assert "error: no attempt was graded: all 1 final attempts ended in 1 error" in errors.stderr
    slow = write_benchmark(
        tmp_path / "s", [scenario("slow", "x", limits={"timeout_sec": 0.5})], name="slow"
    )
    timeouts = cli("run", str(slow), "--agent-cmd", "sleep 30", "-q")
    assert timeouts.exit_code == 3
    assert "ended in 1 timeout" in timeouts.stderr
    bad = cli("run", str(bench), "--agent-cmd", "echo yes", "--fail-under", "1.5")
    assert bad.exit_code == 2
    # A rerun is gated merged with the run it re-ran: its own attempt failed again (0%), the
    # merged run is at 50%.
    cli("run", str(bench), "--agent-cmd", "echo yes", "-q")
    rerun = cli("rerun", "latest", "--failed", "-q", "--fail-under", "0.5")
    assert rerun.exit_code == 0, rerun.output
    assert cli("rerun", "latest", "--failed", "-q", "--fail-under", "0.6").exit_code == 1


def test_exit_codes_are_one_table_with_every_command_linked_from_the_readme() -> None:
    from typer.main import get_command

    from benchyard.cli.app import app

    page = (REPO / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    documented = re.findall(r"^\| `([a-z-]+)` \|", page, flags=re.MULTILINE)
    commands = set(get_command(app).commands)  # type: ignore[attr-defined]
    assert commands <= set(documented), commands - set(documented)
    assert "| `run` | finished;" in page and "3: every final attempt errored or timed out" in page
    assert "(docs/exit-codes.md)" in (REPO / "README.md").read_text(encoding="utf-8")


def test_runs_show_and_benchmarks_answer_json(tmp_path: Path, cli: Cli) -> None:
    write_benchmark(cli.cwd / "mine", [scenario("a", "x"), scenario("b", "y")], name="mine")
    cli("run", "mine", "--agent-cmd", "echo x", "--agent-name", "echoer", "-q")
    runs = json.loads(cli("runs", "--format", "json").stdout)
    assert [(r["agent"]["name"], r["finished_attempts"], r["passed"]) for r in runs] == [
        ("echoer", 2, 1)
    ]
    shown = json.loads(cli("show", "latest", "--format", "json").stdout)
    assert shown["run"]["id"] == runs[0]["id"] and shown["scenario_id"] is None
    assert sorted(a["scenario_id"] for a in shown["attempts"]) == ["a", "b"]
    assert all(a["trajectory"] is None for a in shown["attempts"])
    one = json.loads(cli("show", "latest", "b", "--format", "json").stdout)
    (attempt,) = one["attempts"]
    assert attempt["verdict"] == "failed" and attempt["checks"][0]["type"] == "equals"
    # the answer as the agent gave it (echo's newline included): checks trim it if they need to
    assert attempt["answer"] == "x\n" and [e["role"] for e in attempt["trajectory"]] == [
        "user",
        "assistant",
    ]
    listed = json.loads(cli("benchmarks", "--format", "json", db=False).stdout)
    mine = next(entry for entry in listed if entry["label"] == "mine")
    assert (mine["origin"], mine["valid"], mine["scenarios"]) == ("local", True, 2)
    assert any(entry["label"] == "starter" and entry["origin"] == "built-in" for entry in listed)
    assert cli("runs", "--format", "md").exit_code == 2


def test_reports_give_intervals_per_category_and_per_check(tmp_path: Path, cli: Cli) -> None:
    bench = write_benchmark(
        tmp_path / "b",
        [
            scenario("m1", "yes", category="math"),
            scenario("m2", "no", category="math"),
            {**scenario("t1", "yes", category="text"), "checks": [
                {"type": "equals", "value": "yes"}, {"type": "contains", "value": "y"},
            ]},
        ],
    )  # fmt: skip
    cli("run", str(bench), "--agent-cmd", "echo yes", "-q")
    table = cli("report", "latest").stdout
    assert re.search(r"math\s+│ 1/2\s+│ 50\.0%\s+│ 9\.5-90\.5%", table), table
    assert re.search(r"contains\s+│ 1/1\s+│ 100\.0%\s+│ 20\.7-100\.0%", table), table
    assert re.search(r"equals\s+│ 2/3\s+│ 66\.7%\s+│ 20\.8-93\.9%", table), table
    markdown = cli("report", "latest", "--format", "md").stdout
    assert "| math | 1/2 | 50.0% | 9.5-90.5% | 0 | 0 |" in markdown
    assert "| equals | 2/3 | 66.7% | 20.8-93.9% |" in markdown
    report = json.loads(cli("report", "latest", "--format", "json").stdout)
    assert report["categories"]["math"]["accuracy_ci95"] == pytest.approx([0.0945, 0.9055], 1e-3)
    assert report["checks"]["contains"]["pass_rate_ci95"][0] == pytest.approx(0.2065, 1e-3)


AGENT_TURNS = """#!/bin/sh
# Logs model calls as the protocol allows: 'chatty' four, 'over' three (its max_turns is 2).
case "$BENCHYARD_SCENARIO_ID" in
  chatty) calls=4 ;;
  over) calls=3 ;;
  *) calls=0 ;;
esac
i=0
while [ "$i" -lt "$calls" ]; do
  echo '{"kind": "message", "role": "assistant", "content": "thinking"}' >>"$BENCHYARD_TRAJECTORY_FILE"
  i=$((i + 1))
done
echo yes
"""


def test_review_flags_compare_the_agents_own_turns(tmp_path: Path, cli: Cli) -> None:
    """A conversation's scripted user turns are not `long`, nor is a one-turn scenario with
    max_turns 1 `hit_max_turns`; an agent that takes extra calls, or reports more than its
    max_turns, is flagged (and not failed)."""
    one_turn = {"limits": {"max_turns": 1}}
    bench = write_benchmark(
        tmp_path / "b",
        [
            *(scenario(f"single-{n}", "yes", **one_turn) for n in range(3)),
            {**scenario("chat", "yes"), "stimulus": {"turns": ["hi", "and?", "so?"]}},
            scenario("chatty", "yes"),
            scenario("over", "yes", limits={"max_turns": 2}),
        ],
    )
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT_TURNS, encoding="utf-8")
    cli("run", str(bench), "--agent-cmd", f"sh {agent}", "-q")
    report = json.loads(cli("report", "latest", "--format", "json").stdout)
    flags = [(f["kind"], f["scenario_id"]) for f in report["flags"]]
    assert flags == [("long", "chatty"), ("hit_max_turns", "over")], report["flags"]
    assert report["summary"]["hit_max_turns"] == 1
    # its calls are its own report: past max_turns a flag for review, never a failure
    assert [f for f in report["failures"] if f["scenario_id"] == "over"] == []
    markdown = cli("report", "latest", "--format", "md").stdout
    assert (
        "- long: **chatty** (epoch 1): 4 turns for 1 scripted user turn: 3 beyond them" in markdown
    )


def test_history_marks_partial_runs_versions_and_named_agents(tmp_path: Path, cli: Cli) -> None:
    bench = tmp_path / "b"
    write_benchmark(bench, [scenario("a", "yes"), scenario("b", "no"), scenario("c", "no")])
    assert (
        cli("run", str(bench), "--agent-cmd", "echo yes", "--agent-name", "alpha", "-q").exit_code
        == 0
    )
    cli("rerun", "latest", "--failed", "-q")  # two attempts, both failed again: 0%
    cli("run", str(bench), "--agent-cmd", "echo yes", "--agent-name", "alpha", "--limit", "1", "-q")
    write_benchmark(
        bench, [scenario("a", "yes"), scenario("b", "no"), scenario("c", "no")], version="2.0"
    )
    cli("run", str(bench), "--agent-cmd", "echo no", "--agent-name", "beta", "-q")
    history = json.loads(cli("history", "fixture-bench", "--format", "json").stdout)
    assert [(p["agent"], p["partial"], p["scope"]) for p in history] == [
        ("alpha", False, "all scenarios"),
        ("alpha", True, f"rerun of {history[0]['id'][:8]}"),
        ("alpha", True, "limit 1"),
        ("beta", False, "all scenarios"),
    ]
    table = cli("history", "fixture-bench", "--format", "md").stdout
    assert "| 0.0% (partial) |" in table and "| rerun of " in table
    assert "| 2.0 (new version; no scenario changed) |" in table  # only the version moved
    alpha = json.loads(
        cli("history", "fixture-bench", "--agent", "alpha", "--format", "json").stdout
    )
    assert {p["agent"] for p in alpha} == {"alpha"} and len(alpha) == 3
    compared = json.loads(cli("compare", "latest~3", "latest", "--allow-version-mismatch",
                              "--format", "json").stdout)  # fmt: skip
    assert (compared["baseline"]["agent"], compared["candidates"][0]["run"]["agent"]) == (
        "alpha",
        "beta",
    )
    refused = cli("run", str(bench), "--agent", "oracle", "--agent-name", "x")
    assert refused.exit_code == 2 and "--agent-name names an --agent-cmd agent" in refused.output


def test_the_commit_is_the_agent_scripts_with_a_hash_of_its_diff(tmp_path: Path, cli: Cli) -> None:
    repo = tmp_path / "agent-repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "agent.sh").write_text("echo x\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    head = _git(repo, "rev-parse", "HEAD").strip()
    bench = write_benchmark(tmp_path / "b", [scenario("a", "x")])
    # The current directory (cli.cwd) is no repository: the script's repository is the agent's.
    cli("run", str(bench), "--agent-cmd", f"sh {repo / 'agent.sh'}", "-q")
    clean = json.loads(cli("report", "latest", "--format", "json").stdout)["run"]["agent"]
    assert (clean["commit"], clean["dirty"], clean["diff_hash"]) == (head, False, None)
    (repo / "agent.sh").write_text("echo y\n")
    cli("run", str(bench), "--agent-cmd", f"sh {repo / 'agent.sh'}", "-q")
    dirty = json.loads(cli("report", "latest", "--format", "json").stdout)["run"]["agent"]
    diff = subprocess.run(
        ["git", "-C", str(repo), "diff", "HEAD", "--binary", "--no-ext-diff", "--no-color"],
        capture_output=True,
        check=True,
    ).stdout
    assert (dirty["commit"], dirty["dirty"]) == (head, True)
    assert dirty["diff_hash"] == "sha256:" + hashlib.sha256(diff).hexdigest()
    assert (
        f"commit {head[:10]}+dirty (uncommitted diff {dirty['diff_hash'][:19]})"
        in cli("show", "latest").stdout
    )
    outside = tmp_path / "outside.sh"
    outside.write_text("echo x\n")
    cli("run", str(bench), "--agent-cmd", f"sh {outside}", "-q")
    assert json.loads(cli("runs", "--format", "json").stdout)[0]["agent"]["commit"] is None


def test_failures_show_their_epoch_and_show_reads_plainly(tmp_path: Path, cli: Cli) -> None:
    from benchyard.providers.fake_server import FakeLLM
    from tests.integration.providers.conftest import write_project

    bench = write_benchmark(tmp_path / "b", [scenario("a", "yes"), scenario("b", "no")])
    cli("run", str(bench), "--agent-cmd", "echo yes", "--epochs", "2", "-q")
    table = cli("report", "latest").stdout
    assert re.search(r"│ scenario ┃? *│? *epoch|scenario\s+┃\s+epoch", table), table
    assert re.search(r"│ b\s+│ 2\s+│ failed", table), table
    shown = cli("show", "latest").stdout
    assert "\nsettings\n  concurrency: 8\n  epochs: 2\n  limit: none\n  filters: none\n" in shown
    assert "{'" not in shown and "'}" not in shown
    with FakeLLM({"default": {"content": "yes"}}) as llm:
        write_project(cli.cwd, llm.url)
        cli("run", str(bench), "--agent", "model", "-q", "--filter", "id:a")
    detail = cli("show", "latest", "a").stdout
    call = re.search(r"message\s+assistant\s*\[([^\]]*)\]", detail)
    assert call is not None, detail
    assert re.fullmatch(r"\d+/\d+ tok, ttft \d+\.\d\ds, latency \d+\.\d\ds, \$\d\.\d{4}", call[1])


def test_keep_workdirs_says_where_and_the_progress_bar_explains_itself(
    tmp_path: Path, cli: Cli
) -> None:
    bench = write_benchmark(tmp_path / "b", [scenario("a", "yes"), scenario("b", "no")])
    root = tmp_path / "work-root"
    root.mkdir()
    result = cli("run", str(bench), "--agent-cmd", "echo yes", "--keep-workdirs",
                 "--work-root", str(root))  # fmt: skip
    assert result.exit_code == 0
    kept = re.search(r"kept 2 workdirs in (\S+) \(one per try", result.stderr)
    assert kept is not None, result.stderr
    assert len(list(Path(kept[1]).iterdir())) == 2 and Path(kept[1]).is_relative_to(root)
    assert "✓ passed  ✗ failed  ⧖ timed out  ! error (not counted)  ↻ retried" in result.stderr
    assert "eta" in result.stderr
    oracle = cli("run", str(bench), "--agent", "oracle", "-q", "--keep-workdirs",
                 "--work-root", str(root))  # fmt: skip
    assert "this run's agent needs no workdir, so none was kept" in oracle.stderr


def test_counts_are_written_with_their_plural(tmp_path: Path, cli: Cli) -> None:
    write_benchmark(cli.cwd / "one", [scenario("a", "x")], name="one")
    assert re.search(
        r"^one\s+local\s+1\.0  1 scenario  $", cli("benchmarks", db=False).stdout, re.M
    )
    assert "1 scenario in 1 category (general)" in cli("validate", "one", db=False).stdout
    assert "one 1.0: 1 scenario verified, 0 broken" in cli("verify", "one", db=False).stdout
    cli("run", "one", "--agent-cmd", "echo y", "-q")
    assert "re-running 1 attempt of run" in cli("rerun", "latest", "--failed", "-q").stderr


def test_make_demo_prints_the_failure_table_once(tmp_path: Path, cli: Cli) -> None:
    """The demo's benchyard commands, as the Makefile runs them (on a small benchmark)."""
    recipe = (REPO / "Makefile").read_text(encoding="utf-8").split("\ndemo: setup\n", 1)[1]
    lines = [
        line.strip().removeprefix("$(BIN)/benchyard ")
        for line in recipe.split("\n\n", 1)[0].splitlines()
        if line.strip().startswith("$(BIN)/benchyard ") and " verify " not in line
    ]
    assert len(lines) >= 3
    write_benchmark(cli.cwd / "starter", [scenario("a", "yes"), scenario("b", "no")])
    output = ""
    for line in lines:
        line = line.replace("$(PYTHON) examples/agents/rules_agent.py", "echo yes")
        line = line.replace("$(DEMO_DB)", cli.db_url).replace("starter", "./starter")
        result = cli(*shlex.split(line), db=False)
        assert result.exit_code == 0, (line, result.output)
        output += result.output
    assert output.count("failures (1)") == 1, output
    assert "## Failures in run" not in output


def test_negated_and_forbidden_checks_never_read_as_a_contradiction(
    tmp_path: Path, cli: Cli
) -> None:
    bench = write_benchmark(
        tmp_path / "b",
        [
            {
                "id": "note",
                "stimulus": "Summarise without ticket numbers or names.",
                "checks": [
                    {"type": "response_shape", "forbidden": ["OPS-", "Dana", "Whitfield"]},
                    {"type": "contains", "value": ["OPS-", "Dana"], "mode": "any", "negate": True},
                    {"type": "contains", "value": ["decided"], "negate": True},
                ],
            }
        ],
    )
    cli("run", str(bench), "--agent-cmd", "echo 'OPS-2291: Dana moved the warehouse'", "-q")
    shown = cli("show", "latest", "note").stdout
    assert "none of" not in shown
    assert (
        "✗ response_shape (weight 1): 1 of 1 constraints unmet: forbidden 'OPS-', 'Dana', "
        "'Whitfield' (found 'OPS-', 'Dana')"
    ) in shown
    assert (
        "✗ contains (weight 1): negated: must not hold, but does: contains any of 'OPS-', "
        "'Dana': found 'OPS-', 'Dana'"
    ) in shown
    assert "✓ contains (weight 1): negated: must not hold, and does not: contains 'decided': " in (
        shown
    )


def test_the_unsandboxed_refusal_looks_at_the_selected_scenarios(tmp_path: Path, cli: Cli) -> None:
    coding = {
        "id": "code",
        "category": "coding",
        "stimulus": "Write add(a, b).",
        "reference": "```python\ndef add(a, b):\n    return a + b\n```",
        "checks": [{"type": "code_exec", "tests": "assert add(1, 2) == 3"}],
    }
    bench = write_benchmark(tmp_path / "b", [scenario("plain", "x"), coding])
    refused = cli("run", str(bench), "--agent", "oracle", "--sandbox", "none", "-q")
    assert refused.exit_code == 2
    assert "refusing to run model-written code (checks: code_exec)" in refused.output
    for selection in (("--filter", "id:plain"), ("--limit", "1")):
        allowed = cli("run", str(bench), "--agent", "oracle", "--sandbox", "none", "-q", *selection)
        assert allowed.exit_code == 0, allowed.output
    queued = cli("run", str(bench), "--agent", "oracle", "--sandbox", "none", "--enqueue",
                 "--filter", "category:general")  # fmt: skip
    assert queued.exit_code == 0, queued.output


def test_the_docs_agree_on_retries_categories_and_trajectories(storeless_cli: Cli) -> None:
    from benchyard.runner.failures import POLICIES

    architecture = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z_]+)` \| [^|]+ \| (yes|no) \| `(\w+)` \| (yes|no) \| (yes|no) \|$",
                      architecture, flags=re.MULTILINE)  # fmt: skip
    documented = {
        kind: (retry, verdict, counts, claimed) for kind, retry, verdict, counts, claimed in rows
    }
    actual = {
        kind.value: (
            "yes" if p.retry else "no", p.verdict, "yes" if p.counts else "no",
            "yes" if p.claimed else "no",
        )
        for kind, p in POLICIES.items()
    }  # fmt: skip
    assert documented == actual
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    retried = {k.value for k, p in POLICIES.items() if p.retry and not p.claimed}
    assert "errors are retried" not in (REPO / "docs" / "benchmark-format.md").read_text()
    assert retried == {"sandbox_start", "provider_unavailable", "check_error", "judge_unparseable"}
    said = " ".join(readme.split())
    assert "Faults a retry would only repeat are not: a harness bug, a provider refusing" in said
    validated = storeless_cli("validate", "starter").stdout
    categories = re.search(r"in 8 categories \(([^)]*)\)", validated)
    assert categories is not None
    for name in categories[1].split(", "):
        assert f"`{name}`" in readme.split("The built-in `starter` library", 1)[1][:300]
    assert "eight categories" in (REPO / "src/benchyard/library/starter/benchmark.yaml").read_text()
    assert "`benchyard show RUN SCENARIO`" in readme
    protocol = (REPO / "docs" / "agent-protocol.md").read_text(encoding="utf-8")
    assert "(`benchyard show RUN SCENARIO` and its `--format json`" in protocol


def test_init_ignores_the_store_once(cli: Cli) -> None:
    first = cli("init", db=False)
    assert f"wrote {Path('.') / '.gitignore'}" in first.output
    cli("init", db=False)
    assert (cli.cwd / ".gitignore").read_text() == ".benchyard/\n"
    other = cli.cwd / "project"
    other.mkdir()
    (other / ".gitignore").write_text("*.pyc")
    cli("init", str(other), db=False)
    cli("init", str(other), db=False)
    assert (other / ".gitignore").read_text() == "*.pyc\n.benchyard/\n"
    kept = cli.cwd / "kept"
    kept.mkdir()
    (kept / ".gitignore").write_text("/.benchyard\n")
    assert "already ignores" in cli("init", str(kept), db=False).output
    assert (kept / ".gitignore").read_text() == "/.benchyard\n"


def test_every_json_report_follows_the_shipped_schema(tmp_path: Path, cli: Cli) -> None:
    """Reports printed by a real process (outside the in-process schema check of conftest.py)."""
    bench = write_benchmark(tmp_path / "b", [scenario("a", "yes"), scenario("b", "no")])
    cli("run", str(bench), "--agent-cmd", "echo yes", "--epochs", "2", "-q")
    cli("rerun", "latest", "--failed", "-q")
    process = cli.process("report", "latest~1", "latest", "--format", "json")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    for report in json.loads(out):
        validate_report(report)
    merged = cli.process("report", "latest", "--merged", "--format", "json")
    validate_report(json.loads(merged.communicate(timeout=120)[0]))
