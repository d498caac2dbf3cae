"""Every command that reports something prints one JSON document with `--format json`, which
follows the schema shipped for it (docs/json-output.md); the schema files are what the models
generate. The commands are enumerated from the Typer app, so that a new one without JSON (or
without a reason for having none) fails here."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import typer.main
import yaml

from benchyard.automation.proposals import propose_update
from benchyard.automation.schedules import list_schedules
from benchyard.cli.app import full_app
from benchyard.providers.fake_server import FakeLLM
from benchyard.report.output_schemas import (
    COMMAND_SCHEMAS,
    output_schemas,
    shipped_schema,
    validate_output,
)
from benchyard.store.store import Store
from tests.integration.automation.helpers import SECRET, receiver, write_config
from tests.support import Cli, scenario, write_benchmark
from tests.unit.importers.sources import GSM8K

REPO = Path(__file__).resolve().parents[2]

NO_JSON: dict[str, str] = {
    "worker": "a long-running process: it logs, it reports nothing",
    "serve": "a long-running process (the web UI answers JSON under /api/)",
    "fake-llm": "a long-running process (a fake endpoint for tests)",
    "mcp": "a long-running process (an MCP server: its tools answer JSON)",
    "export": "its --format names the export format (inspect, atif, jsonl): other tools' schemas",
    "view-bundle": "it writes a directory of web pages; its one line says where and how to serve it",
}
"""Commands that report nothing a JSON document could hold, and why."""

JUDGE = {"default": {"content": '{"better": "1", "reason": "the first"}'}}
# the first token after the round trip, else `speed` finds it implausible (exit 1, ttft_below_rtt)
SPEEDY = {"default": {"content": "one two three four five six", "delay_sec": 0.05}}
POLICY = "min_tasks: 1\nlevels:\n  full:\n    min_accuracy: 0.4\n"


def leaf_commands() -> Iterator[tuple[str, Any]]:
    """Every command of the app by its full name ('run', 'proposals list'), with its command."""

    def walk(command: Any, path: list[str]) -> Iterator[tuple[str, Any]]:
        subcommands = getattr(command, "commands", None)
        if subcommands is None:
            yield " ".join(path), command
            return
        for name, sub in subcommands.items():
            yield from walk(sub, [*path, name])

    yield from walk(typer.main.get_command(full_app()), [])


def has_json_format(command: Any) -> bool:
    return any("--format" in getattr(param, "opts", ()) for param in command.params)


@pytest.fixture
def bench(cli: Cli) -> Path:
    """Two scenarios: one the oracle passes, one whose reference is wrong (so that something
    fails: rerun --failed has an attempt to re-run, verify finds a broken reference)."""
    wrong = {**scenario("wrong", "4"), "reference": "5", "category": "math"}
    return write_benchmark(cli.cwd / "bench", [scenario("right", "ok"), wrong], name="tiny")


Arguments = list[str] | Callable[[], list[str]]
SPEED_OPTIONS = ["--lengths", "short=20", "--repeats", "1", "--warmup", "0"]
SPEED_OPTIONS += ["--concurrency", "1", "--rounds", "1"]


def invocations(
    bench: Path, policy: Path, store: Store
) -> list[tuple[str | None, Arguments, bool, int]]:
    """(command, arguments, with --db, expected exit status), in an order that builds a store:
    every command with JSON, some twice (a second shape of its output). A step without a command
    is run as it is (no --format json), to make what the next one reads."""
    work = bench.parent
    broken = work / "broken"
    broken.mkdir()
    (broken / "benchmark.yaml").write_text("name: broken\nversion: [1\n", encoding="utf-8")
    source = work / "gsm8k.jsonl"
    source.write_text("".join(json.dumps(record) + "\n" for record in GSM8K), encoding="utf-8")
    log = work / "exported.json"
    instances, predictions = work / "instances.jsonl", work / "predictions.jsonl"
    instance = {
        "instance_id": "acme__calc-1",
        "repo": "acme/calc",
        "base_commit": "0" * 40,
        "patch": "diff --git a/calc.py b/calc.py\n",
        "test_patch": "",
        "problem_statement": "add adds",
        "FAIL_TO_PASS": ["test_add"],
        "PASS_TO_PASS": [],
    }
    instances.write_text(json.dumps(instance) + "\n", encoding="utf-8")
    empty = {"instance_id": "acme__calc-1", "model_patch": "", "model_name_or_path": "m"}
    predictions.write_text(json.dumps(empty) + "\n", encoding="utf-8")  # graded without docker
    proposed = write_benchmark(work / "proposed", [scenario("p1", "x")], name="proposed")
    first = propose_update(store, proposed, scenarios=[scenario("p2", "y")], title="add p2")
    second = propose_update(store, proposed, version="9.0", title="bump")
    return [
        ("init", ["init", "project"], False, 0),
        ("init", ["init", "project"], False, 0),
        ("import", ["import", "gsm8k", str(source), "-o", str(work / "imported")], False, 0),
        ("benchmarks", ["benchmarks"], False, 0),
        ("validate", ["validate", str(bench)], False, 0),
        ("validate", ["validate", str(broken)], False, 1),
        ("verify", ["verify", str(bench)], False, 1),  # the wrong reference is broken
        ("verify", ["verify", str(broken)], False, 1),
        ("status", ["status"], False, 0),
        (
            "grade-patches",
            ["grade-patches", str(instances), str(predictions), "-o", str(work / "graded.json")],
            False,
            0,
        ),
        ("run", ["run", str(bench), "--agent", "oracle"], True, 0),
        ("run", ["run", str(bench), "--agent", "oracle", "--fail-under", "0.9"], True, 1),
        ("pairwise", ["pairwise", "latest~1", "latest"], True, 0),
        ("rerun", ["rerun", "latest", "--failed"], True, 0),
        ("runs", ["runs"], True, 0),
        ("show", ["show", "latest~1"], True, 0),
        ("show", ["show", "latest~1", "wrong"], True, 0),
        ("report", ["report", "latest~1"], True, 0),
        ("report", ["report", "latest~2", "latest~1"], True, 0),
        ("compare", ["compare", "latest~2", "latest~1"], True, 0),
        ("history", ["history", "tiny"], True, 0),
        ("rescore", ["rescore", "latest~1"], True, 0),
        ("gate", ["gate", "latest", "--policy", str(policy)], True, 0),
        ("gc", ["gc", "--keep-last", "1", "--dry-run"], True, 0),
        ("gc", ["gc", "--keep-last", "1"], True, 0),
        (None, ["export", "latest~1", "--format", "inspect", "-o", str(log)], True, 0),
        ("import-run", ["import-run", str(log), "--benchmark", str(bench)], True, 0),
        ("proposals list", ["proposals", "list"], True, 0),
        ("proposals show", ["proposals", "show", first.id[:8]], True, 0),
        ("proposals accept", ["proposals", "accept", first.id[:8]], True, 0),
        ("proposals reject", ["proposals", "reject", second.id[:8]], True, 0),
        (
            "schedule add",
            ["schedule", "add", str(bench), "-a", "oracle", "--cron", "0 3 * * 1"],
            True,
            0,
        ),
        ("schedule list", ["schedule", "list"], True, 0),
        ("schedule remove", lambda: ["schedule", "remove", list_schedules(store)[0].id], True, 0),
        ("webhooks list", ["webhooks", "list"], False, 0),
        ("webhooks deliveries", ["webhooks", "deliveries"], True, 0),
        ("webhooks test", ["webhooks", "test", "ci"], True, 0),
        ("webhooks deliver", ["webhooks", "deliver"], True, 0),
        ("run", ["run", str(bench), "--agent", "oracle", "--enqueue"], True, 0),
        ("cancel", ["cancel", "latest"], True, 0),
        ("speed", ["speed", "--agent", "speedy", *SPEED_OPTIONS], True, 0),
        ("agents list", ["agents", "list"], False, 0),
        ("agents install", ["agents", "install", "codex"], False, 0),  # make test installed it
    ]


def test_every_command_prints_json_that_follows_its_schema(
    cli: Cli, bench: Path, store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    monkeypatch.setenv("BENCHYARD_TEST_WEBHOOK_SECRET", SECRET)
    with receiver() as hooks, FakeLLM(JUDGE) as judge, FakeLLM(SPEEDY) as speedy:
        config = write_config(cli.cwd, hooks.url)  # a webhook `ci`: runs announce themselves
        providers = {"judge": {"base_url": judge.url}, "speedy": {"base_url": speedy.url}}
        judging = {"judge": {"provider": "judge", "model": "j"}}  # for pairwise
        measured = {"speedy": {"kind": "openai", "provider": "speedy", "model": "s"}}  # speed
        with config.open("a", encoding="utf-8") as appended:
            appended.write(yaml.safe_dump({"providers": providers}) + yaml.safe_dump(judging))
            appended.write(yaml.safe_dump({"agents": measured}))
        run_every_command(cli, invocations(bench, policy, store))


def run_every_command(cli: Cli, planned: list[tuple[str | None, Arguments, bool, int]]) -> None:
    exercised = {command for command, *_ in planned}
    problems = []
    for name, command in leaf_commands():
        if name in NO_JSON:
            continue
        if not has_json_format(command):
            problems.append(f"{name}: no --format option (give it --format json, or a reason)")
        if name not in COMMAND_SCHEMAS:
            problems.append(f"{name}: no schema (report/output_schemas.py COMMAND_SCHEMAS)")
        if name not in exercised:
            problems.append(f"{name}: not run with --format json by this test")
    assert not problems, "\n".join(problems)
    for command, given, with_db, expected in planned:
        arguments = given() if callable(given) else given
        if command is None:
            made = cli(*arguments, db=with_db)
            assert made.exit_code == expected, f"{' '.join(arguments)}:\n{made.output}"
            continue
        result = cli(*arguments, "--format", "json", db=with_db)
        shown = f"{' '.join(arguments)} --format json"
        assert result.exit_code == expected, f"{shown}: exit {result.exit_code}\n{result.output}"
        try:
            payload = json.loads(result.stdout)  # one document, nothing else on stdout
        except json.JSONDecodeError as error:
            pytest.fail(f"{shown}: stdout is not one JSON document ({error}):\n{result.stdout}")
        try:
            validate_output(command, payload)
        except jsonschema.ValidationError as error:
            pytest.fail(
                f"{shown}: does not follow its schema: {error.message} at {error.json_path}"
            )
        documents = payload if isinstance(payload, list) else [payload]
        assert all("schema_version" in document for document in documents), shown


def test_json_outputs_carry_what_the_text_says(cli: Cli, bench: Path) -> None:
    ran = json.loads(cli("run", str(bench), "--agent", "oracle", "--format", "json").stdout)
    assert ran["report"]["summary"]["passed"] == 1 and ran["gate"] is None
    assert ran["report"]["run"]["id"] == ran["run_id"] and not ran["queued"]
    gated = cli("run", str(bench), "--agent", "oracle", "--fail-under", "0.9", "--format", "json")
    assert gated.exit_code == 1 and json.loads(gated.stdout)["gate"]["exit_code"] == 1
    assert "below threshold" in gated.stderr  # notes stay on stderr
    verified = json.loads(cli("verify", str(bench), "--format", "json", db=False).stdout)
    assert (verified["verified"], verified["broken"]) == (2, 1)
    assert [r["scenario_id"] for r in verified["references"] if not r["ok"]] == ["wrong"]
    rescored = json.loads(cli("rescore", "latest", "--format", "json").stdout)
    assert rescored["rescored_from"] != rescored["run_id"] and rescored["regraded"] == 2
    swept = json.loads(cli("gc", "--keep-last", "1", "--dry-run", "--format", "json").stdout)
    assert swept["dry_run"] and len(swept["runs"]) == 2


def test_a_benchmark_with_problems_is_listed_in_the_json(cli: Cli, tmp_path: Path) -> None:
    bench = write_benchmark(cli.cwd / "b", [{"id": "x", "stimulus": "?", "checks": "no"}])
    result = cli("validate", str(bench), "--format", "json", db=False)
    assert result.exit_code == 1
    checked = json.loads(result.stdout)
    assert not checked["valid"] and checked["problems"]
    assert all(p["file"].endswith("main.yaml") for p in checked["problems"])
    assert "problem" in result.stderr


def test_the_schema_files_are_what_the_models_generate() -> None:
    """Regenerate them with `python -m benchyard.report.output_schemas` after changing a model."""
    for schema in output_schemas().values():
        shipped = shipped_schema(schema.name)
        assert shipped == schema.generated(), (
            f"{schema.file} is out of date: run python -m benchyard.report.output_schemas"
        )
        assert shipped["$id"].endswith(f":{schema.version}")
        jsonschema.Draft202012Validator.check_schema(shipped)


def test_every_schema_file_is_shipped_and_documented() -> None:
    """pyproject's package-data ships report/schemas/, and docs/json-output.md names each
    command's schema file."""
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"report/schemas/*.json"' in pyproject
    docs = (REPO / "docs" / "json-output.md").read_text(encoding="utf-8")
    for command, name in COMMAND_SCHEMAS.items():
        file = "report.schema.json" if name == "report" else f"{name}.schema.json"
        assert f"| `{command}` |" in docs and file in docs, command
