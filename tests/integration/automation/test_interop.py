"""Interop: a run exported as an Inspect AI log that Inspect's own `read_eval_log` reads, samples
and scores included; an Inspect log imported and compared with benchyard's run of the same
scenarios, with the right flips; ATIF trajectories valid against the format's schema; JSONL."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log, write_eval_log
from inspect_ai.log._log import EvalConfig, EvalDataset, EvalResults, EvalSample, EvalSpec
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Score

from benchyard.report.compare import compare_runs
from benchyard.store.store import Store
from tests.integration.queue.helpers import logging_agent, mixed_benchmark
from tests.support import UNSANDBOXED, Cli

SCHEMAS = Path(__file__).parents[2] / "fixtures" / "schemas"


def _benchyard_run(cli: Cli, bench: Path, tmp_path: Path, *options: str) -> None:
    """A run of `bench` by the agent `mine`: right on p* scenarios, wrong on f* ones."""
    agent = logging_agent(tmp_path / "agent.log", 0)
    ran = cli(
        "run",
        str(bench),
        "--agent-cmd",
        agent,
        "--agent-name",
        "mine",
        *UNSANDBOXED,
        "-q",
        *options,
    )
    assert ran.exit_code == 0, ran.output


def test_an_exported_run_is_read_by_inspects_own_reader(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = mixed_benchmark(tmp_path / "bench", passing=3, failing=2)
    _benchyard_run(cli, bench, tmp_path, "--epochs", "2")
    run = store.resolve_run("latest")
    out = tmp_path / "logs"
    exported = cli("export", "latest", "--format", "inspect", "-o", str(out))
    assert exported.exit_code == 0, exported.output
    (path,) = out.glob("*.json")
    assert path.name.endswith(f"_fixture-bench_{run.id}.json")
    (listed,) = list_eval_logs(str(out))  # what `inspect view` lists in a log directory
    assert listed.name.endswith(path.name) and listed.task == "fixture-bench"
    log = read_eval_log(str(path))
    assert log.status == "success"
    assert (log.eval.task, log.eval.model, log.eval.config.epochs) == (
        "fixture-bench",
        "benchyard/mine",
        2,
    )
    assert log.samples is not None and len(log.samples) == 10
    by_key = {(str(s.id), s.epoch): s for s in log.samples}
    passed = by_key[("p00", 2)]
    assert passed.scores is not None and passed.scores["benchyard"].value == "C"
    assert passed.output.completion == "right\n"  # the answer as the agent printed it
    assert passed.input == "say right" and passed.target == "right"
    failed = by_key[("f01", 1)]
    assert failed.scores is not None and failed.scores["benchyard"].value == "I"
    assert "expected" in str(failed.scores["benchyard"].explanation)
    assert failed.metadata["category"] == "hard"
    assert log.results is not None
    accuracy = log.results.scores[0].metrics["accuracy"].value
    assert accuracy == pytest.approx(0.6)


def _inspect_log(path: Path, verdicts: dict[str, str], fmt: str) -> Path:
    samples = [
        EvalSample(
            id=sid,
            epoch=1,
            input=f"say {sid}",
            target="right",
            output=ModelOutput.from_content("openai/some-model", "right" if v == "C" else "wrong"),
            scores={"match": Score(value=v, explanation=f"graded {v}")},
        )
        for sid, v in verdicts.items()
    ]
    log = EvalLog(
        status="success",
        eval=EvalSpec(
            created=datetime(2026, 3, 1, tzinfo=UTC).isoformat(),
            task="made-elsewhere",
            dataset=EvalDataset(name="made-elsewhere", samples=len(samples)),
            model="openai/some-model",
            config=EvalConfig(),
        ),
        results=EvalResults(total_samples=len(samples), completed_samples=len(samples)),
        samples=samples,
    )
    write_eval_log(log, str(path), format=fmt)  # type: ignore[arg-type]
    return path


@pytest.mark.parametrize("fmt", ["json", "eval"])
def test_an_imported_inspect_log_compares_with_benchyards_run_by_scenario(
    fmt: str, tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = mixed_benchmark(tmp_path / "bench", passing=4, failing=2)
    _benchyard_run(cli, bench, tmp_path)
    ours = store.resolve_run("latest")  # p00-p03 pass, f00-f01 fail
    verdicts = {"p00": "I", "p01": "I", "p02": "C", "p03": "C", "f00": "C", "f01": "I"}
    log = _inspect_log(tmp_path / f"elsewhere.{fmt}", verdicts, fmt)
    imported = cli("import-run", str(log), "--benchmark", str(bench), "--agent-name", "theirs")
    assert imported.exit_code == 0, imported.output
    theirs = store.get_run(imported.output.strip().splitlines()[-1])
    assert (theirs.benchmark_hash, theirs.agent_name) == (ours.benchmark_hash, "theirs")
    assert theirs.settings["imported_from"]["format"] == "inspect"
    attempts = {a.scenario_id: a for a in store.attempts(theirs.id)}
    assert attempts["p00"].verdict == "failed" and attempts["p00"].cause == "graded I"
    assert attempts["f00"].category == "hard" and attempts["f00"].answer == "right"
    comparison = compare_runs(store, [ours, theirs])
    flips = {row.scenario_id: row.flips[0] for row in comparison.scenarios if row.flips[0]}
    assert flips == {"p00": "pass_to_fail", "p01": "pass_to_fail", "f00": "fail_to_pass"}
    candidate = comparison.candidates[0]
    assert (candidate.pass_to_fail, candidate.fail_to_pass, candidate.paired) == (2, 1, 6)
    shown = cli("compare", ours.id, theirs.id, "--flips-only")
    assert shown.exit_code == 0 and "p00" in shown.output


def test_a_run_exported_and_imported_again_has_the_same_verdicts(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = mixed_benchmark(tmp_path / "bench", passing=3, failing=2)
    _benchyard_run(cli, bench, tmp_path)
    ours = store.resolve_run("latest")
    out = tmp_path / "roundtrip.json"
    assert cli("export", "latest", "--format", "inspect", "-o", str(out)).exit_code == 0
    imported = cli("import-run", str(out), "--benchmark", str(bench))
    assert imported.exit_code == 0, imported.output
    again = store.get_run(imported.output.strip().splitlines()[-1])
    assert again.agent_name == "mine"
    comparison = compare_runs(store, [ours, again])
    assert all(row.flips == [None] for row in comparison.scenarios)
    assert comparison.candidates[0].paired == 5


def test_atif_trajectories_follow_the_format_with_tool_calls_and_results(
    tmp_path: Path, cli: Cli
) -> None:
    ran = cli("run", "starter", "--agent", "oracle", "--filter", "category:tools", "-q")
    assert ran.exit_code == 0, ran.output
    out = tmp_path / "atif"
    exported = cli("export", "latest", "--format", "atif", "-o", str(out))
    assert exported.exit_code == 0, exported.output
    schema = json.loads((SCHEMAS / "atif-v1.4.schema.json").read_text())
    index = json.loads((out / "index.json").read_text())["trajectories"]
    assert len(index) == len(list(out.glob("*.trajectory.json"))) > 5
    calls = 0
    for entry in index:
        document = json.loads((out / entry["file"]).read_text())
        jsonschema.validate(document, schema)
        assert [s["step_id"] for s in document["steps"]] == list(
            range(1, len(document["steps"]) + 1)
        )
        for step in document["steps"]:
            ids = {call["tool_call_id"] for call in step.get("tool_calls", [])}
            calls += len(ids)
            for result in step.get("observation", {}).get("results", []):
                assert result.get("source_call_id") in ids | {None}
        assert document["extra"]["verdict"] == entry["verdict"] == "passed"
    assert calls > 5


def test_jsonl_has_one_flat_line_per_try(tmp_path: Path, cli: Cli) -> None:
    bench = mixed_benchmark(tmp_path / "bench", passing=2, failing=1)
    _benchyard_run(cli, bench, tmp_path)
    exported = cli("export", "latest", "--format", "jsonl")
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(line) for line in exported.output.splitlines()]
    assert [(r["scenario_id"], r["verdict"], r["final"]) for r in rows] == [
        ("f00", "failed", True),
        ("p00", "passed", True),
        ("p01", "passed", True),
    ]
    assert rows[0]["agent"] == "mine" and rows[0]["checks"][0]["type"] == "equals"
    assert "trajectory" not in rows[0]
    with_events = cli("export", "latest", "--format", "jsonl", "--trajectories")
    assert json.loads(with_events.output.splitlines()[0])["trajectory"]


def test_the_benchmark_of_an_import_must_load(tmp_path: Path, cli: Cli) -> None:
    log = _inspect_log(tmp_path / "x.json", {"a": "C"}, "json")
    refused = cli("import-run", str(log), "--benchmark", str(tmp_path / "nowhere"))
    assert refused.exit_code == 2 and "no benchmark at" in refused.output
    not_a_log = tmp_path / "not.json"
    not_a_log.write_text("[1, 2]")
    refused = cli("import-run", str(not_a_log))
    assert refused.exit_code == 2 and "not an Inspect log" in refused.output
