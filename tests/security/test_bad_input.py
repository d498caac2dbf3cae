"""Bad input in benchmark files, found alongside the "hostile agents" hardening: a YAML alias bomb,
data nested 100,000 deep, an id longer than the store keeps, links in fixture directories that
lead out of the benchmark. Each of these passed `validate` and then hung a run, printed a
traceback, failed on PostgreSQL only, or copied a host file into the agent's workdir; now each is
a problem naming its file, line and field, and nothing reaches the store."""

from __future__ import annotations

import os
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from benchyard.store.store import Store
from tests.support import Cli, scenario, write_benchmark

RUN_LIMIT_SEC = 300  # far beyond what these commands need: only a hang reaches it
MANIFEST = 'name: bad-input\nversion: "1.0"\n'


def _write(root: Path, files: dict[str, str]) -> Path:
    """A benchmark from exact file texts (dedented), so that the lines in problems are known."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "benchmark.yaml").write_text(MANIFEST, encoding="utf-8")
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=RUN_LIMIT_SEC)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"the command hung for {RUN_LIMIT_SEC} s")
    return process.returncode, out, err


def _problems(cli: Cli, *args: str) -> list[str]:
    """Run a command as a real process that must reject the benchmark: its problem lines."""
    code, out, err = _finish(cli.process(*args, db=args[0] != "validate"))
    assert "Traceback" not in err, err
    assert code == 1, (out, err)
    lines = err.splitlines()
    assert lines[-1] == f"{len(lines) - 1} problem{'' if len(lines) == 2 else 's'} found"
    return lines[:-1]


# ---- YAML alias bombs ------------------------------------------------------------------------

LAUGHS = (
    "{a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol], "
    + ", ".join(
        f"{name}: &{name} [{', '.join([f'*{before}'] * 10)}]"
        for before, name in zip("abcdefgh", "bcdefghi", strict=True)
    )
    + "}"
)
"""A "billion laughs" mapping on one line: each key repeats the one before ten times (10^9)."""

BOMBS = {
    "a tool result": """\
        - id: bomb
          stimulus: Look up the order.
          tools:
            - name: lookup_order
              result: {laughs}
          checks:
            - type: contains
              value: lol
        """,
    "a json_schema schema": """\
        - id: bomb
          stimulus: Answer in JSON.
          checks:
            - type: json_schema
              schema: {laughs}
        """,
    "an output_match value": """\
        - id: bomb
          stimulus: Answer in JSON.
          checks:
            - type: output_match
              path: $.items
              op: eq
              value: {laughs}
        """,
}
BOMB_FIELDS = {
    "a tool result": (5, "tools[0].result.i"),
    "a json_schema schema": (5, "checks[0].schema.i"),
    "an output_match value": (7, "checks[0].value.i"),
}


@pytest.mark.parametrize("where", BOMBS)
def test_an_alias_bomb_is_a_problem_at_its_field_not_a_hang(
    where: str, tmp_path: Path, cli: Cli, store: Store
) -> None:
    text = BOMBS[where].replace("{laughs}", LAUGHS)
    bench = _write(tmp_path / "bench", {"scenarios/main.yaml": text})
    line, field = BOMB_FIELDS[where]
    expected = re.compile(
        rf"scenarios/main\.yaml:{line}: {re.escape(field)}: aliases \(\*name\) expand the "
        r"file to 1,234,567,9\d\d values, more than the 1,000,000 allowed; write the data out, "
        r"or alias less of it"
    )
    for command in (["validate"], ["run", "--agent", "oracle", "-q"]):
        (problem,) = _problems(cli, command[0], str(bench), *command[1:])
        assert expected.fullmatch(problem), problem
    assert store.count_runs() == 0


def test_anchors_shared_by_many_scenarios_still_load(tmp_path: Path, storeless_cli: Cli) -> None:
    """What aliases are for (one tool shared by every scenario) stays well inside the limit."""
    tools = "tools: &tools [{name: lookup, result: {rows: [1, 2, 3, 4, 5, 6, 7, 8]}}]"
    scenarios = "".join(
        f"- {{id: s{index}, stimulus: hi, checks: [{{type: equals, value: x}}], "
        f"{tools if index == 0 else 'tools: *tools'}}}\n"
        for index in range(2000)
    )
    bench = _write(tmp_path / "bench", {"scenarios/main.yaml": scenarios})
    code, out, err = _finish(storeless_cli.process("validate", str(bench)))
    assert (code, err) == (0, ""), err
    assert "2000 scenarios" in out


# ---- data nested 100,000 deep -----------------------------------------------------------------

DEPTH = 100_000
JSONL_PREFIX = (
    '{"id": "deep", "stimulus": "hi", "checks": [{"type": "equals", "value": "x"}], '
    '"tools": [{"name": "t", "result": '
)


def test_a_jsonl_line_nested_100000_deep_is_one_problem(tmp_path: Path, cli: Cli) -> None:
    fine = '{"id": "fine", "stimulus": "hi", "checks": [{"type": "equals", "value": "x"}]}'
    deep = JSONL_PREFIX + "[" * DEPTH + "]" * DEPTH + "}]}"
    bench = _write(tmp_path / "bench", {"scenarios/cases.jsonl": f"{fine}\n{deep}\n"})
    column = len(JSONL_PREFIX) + 98  # the result's 98th '[' is the 101st level of the line
    assert _problems(cli, "validate", str(bench)) == [
        f"scenarios/cases.jsonl:2: invalid JSON: nested more than 100 levels deep at column {column}"
    ]


def test_a_yaml_value_nested_100000_deep_is_one_problem(tmp_path: Path, cli: Cli) -> None:
    deep = "[" * DEPTH + "]" * DEPTH
    text = (
        "- id: deep\n  stimulus: hi\n  checks: [{type: equals, value: x}]\n  tools:\n"
        f"    - {{name: t, result: {deep}}}\n"
    )
    bench = _write(tmp_path / "bench", {"scenarios/main.yaml": text})
    (problem,) = _problems(cli, "validate", str(bench))
    assert problem.startswith("scenarios/main.yaml:5: ")
    assert "nested more than 100 levels deep" in problem


# ---- text longer than the store's columns ------------------------------------------------------


def test_an_id_longer_than_the_store_keeps_is_refused_before_the_run(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    too_long = "x" * 201
    bench = write_benchmark(
        tmp_path / "bench",
        [scenario(too_long, "1"), scenario("b", "1", category=too_long)],
    )
    result = cli("run", str(bench), "--agent", "oracle", "-q")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "scenarios/main.yaml:1: id: at most 200 characters (what the store keeps), found 201",
        "scenarios/main.yaml:9: category: at most 200 characters (what the store keeps), found 201",
        "2 problems found",
    ]
    assert store.count_runs() == 0


def test_the_longest_id_category_and_check_name_the_store_keeps_are_stored_whole(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    """The limits are the store's own: 200 characters fit in SQLite and PostgreSQL alike."""
    longest = "y" * 200
    case = scenario(longest, "1", category=longest)
    case["checks"][0]["name"] = longest
    bench = write_benchmark(tmp_path / "bench", [case])
    assert cli("run", str(bench), "--agent", "oracle", "-q").exit_code == 0
    (attempt,) = store.attempts(store.resolve_run("latest").id)
    assert (attempt.scenario_id, attempt.category, attempt.checks[0].label) == (longest,) * 3
    assert attempt.verdict == "passed"


# ---- links in fixtures -------------------------------------------------------------------------

SECRET = "host-secret-5e6f7a"
FIXTURE_SCENARIO = """\
    - id: leak
      stimulus: Summarise the files you were given.
      fixtures:
        files:
          - {src}
      checks:
        - type: contains
          value: secret
    """


@pytest.fixture
def host_secret(tmp_path: Path) -> Path:
    """A host file outside the benchmark, and a directory holding it."""
    secret = tmp_path / "host" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET, encoding="utf-8")
    return secret


def _fixture_bench(root: Path, src: str, links: dict[str, Path | str]) -> Path:
    bench = _write(
        root,
        {
            "scenarios/main.yaml": FIXTURE_SCENARIO.format(src=src),
            "scenarios/data/notes.txt": "notes",
            "scenarios/data/sub/more.txt": "more",
            "shared/inside.txt": "shared",
        },
    )
    for relative, target in links.items():
        (bench / relative).symlink_to(target)
    return bench


@pytest.mark.parametrize(
    ("src", "link", "shown"),
    [
        ("data", "scenarios/data/leak.txt", "scenarios/data/leak.txt"),
        ("data", "scenarios/data/sub/leak.txt", "scenarios/data/sub/leak.txt"),
        ("data", "scenarios/data/host", "scenarios/data/host"),
        ("data/sub", "scenarios/data/sub/leak.txt", "scenarios/data/sub/leak.txt"),
    ],
)
def test_a_fixture_directory_holding_a_link_out_of_the_benchmark_is_refused(
    src: str, link: str, shown: str, tmp_path: Path, host_secret: Path, cli: Cli, store: Store
) -> None:
    target = (host_secret.parent if link.endswith("host") else host_secret).resolve()
    bench = _fixture_bench(tmp_path / "bench", src, {link: target})
    expected = (
        f"scenarios/main.yaml:5: fixtures.files[0].src: '{src}' holds a link {shown} that "
        f"leads outside the benchmark directory (to {target})"
    )
    assert _problems(cli, "validate", str(bench)) == [expected]
    assert _problems(cli, "run", str(bench), "--agent", "oracle", "-q") == [expected]
    assert store.count_runs() == 0


def test_a_fixture_that_is_a_link_out_of_the_benchmark_is_refused(
    tmp_path: Path, host_secret: Path, cli: Cli
) -> None:
    bench = _fixture_bench(tmp_path / "bench", "leak.txt", {"scenarios/leak.txt": host_secret})
    assert _problems(cli, "validate", str(bench)) == [
        "scenarios/main.yaml:5: fixtures.files[0].src: 'leak.txt' leads outside the benchmark "
        f"directory through a link (to {host_secret.resolve()})"
    ]


def test_a_link_to_nothing_and_links_in_a_loop_are_refused(tmp_path: Path, cli: Cli) -> None:
    bench = _fixture_bench(
        tmp_path / "bench",
        "data",
        {"scenarios/data/gone.txt": "missing.txt", "scenarios/loop": "loop"},
    )
    scenarios = bench / "scenarios" / "main.yaml"
    scenarios.write_text(
        scenarios.read_text().replace("      - data\n", "      - data\n      - loop\n")
    )
    assert _problems(cli, "validate", str(bench)) == [
        "scenarios/main.yaml:5: fixtures.files[0].src: 'data' holds a link "
        "scenarios/data/gone.txt to nothing (missing.txt does not exist)",
        "scenarios/main.yaml:6: fixtures.files[1].src: 'loop' goes through links that lead "
        "to each other",
    ]


def test_a_fixture_path_through_a_file_is_no_such_file(tmp_path: Path, cli: Cli) -> None:
    bench = _fixture_bench(tmp_path / "bench", "data/notes.txt/inner", {})
    assert _problems(cli, "validate", str(bench)) == [
        "scenarios/main.yaml:5: fixtures.files[0].src: no such file 'data/notes.txt/inner' "
        "(looked for scenarios/data/notes.txt/inner)"
    ]


def test_links_that_stay_inside_the_benchmark_are_allowed(
    tmp_path: Path, storeless_cli: Cli
) -> None:
    bench = _fixture_bench(
        tmp_path / "bench",
        "data",
        {
            "scenarios/data/inside.txt": Path("../../shared/inside.txt"),
            "scenarios/data/shared": Path("../../shared"),
        },
    )
    code, out, err = _finish(storeless_cli.process("validate", str(bench)))
    assert (code, err) == (0, ""), err
    assert out.startswith("ok: bad-input 1.0: 1 scenario in 1 category")


def test_a_scenario_file_that_is_a_link_out_of_the_benchmark_is_refused(
    tmp_path: Path, cli: Cli
) -> None:
    outside = _write(tmp_path / "elsewhere", {"cases.yaml": FIXTURE_SCENARIO.format(src="x")})
    bench = _write(
        tmp_path / "bench",
        {"scenarios/main.yaml": "- {id: a, stimulus: hi, checks: [{type: equals, value: x}]}\n"},
    )
    os.symlink(outside / "cases.yaml", bench / "scenarios" / "theirs.yaml")
    assert _problems(cli, "validate", str(bench)) == [
        "benchmark.yaml: scenarios: scenarios/theirs.yaml leads outside the benchmark directory "
        f"through a link (to {(outside / 'cases.yaml').resolve()})"
    ]
