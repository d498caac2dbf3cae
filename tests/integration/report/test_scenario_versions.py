"""Versions per scenario: each attempt records its scenario's own content hash, so that after one
scenario is edited (by an accepted proposal, which bumps the benchmark's version, or by hand in a
fixture) compare and history pair the unchanged scenarios and name the changed ones, instead of
refusing the whole comparison. Attempts from before the hashes leave the whole-benchmark hash to
decide, as before."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import update

from benchyard.automation.proposals import accept, propose_update
from benchyard.benchmarks.loader import load_benchmark
from benchyard.report.compare import compare_runs
from benchyard.store.outcomes import final_outcomes
from benchyard.store.schema import attempts
from benchyard.store.store import Store
from tests.support import UNSANDBOXED, Cli, scenario, write_benchmark

ANSWERS_FROM_FILE = """
import json, os, sys
print(json.load(open(sys.argv[1])).get(os.environ["BENCHYARD_SCENARIO_ID"], ""))
"""
IDS = "abcdef"


def _bench(root: Path) -> Path:
    """Six scenarios; f brings a fixture file."""
    scenarios = [scenario(s, s) for s in IDS[:-1]]
    scenarios.append(scenario("f", "f", fixtures={"files": ["data/f.txt"]}))
    return write_benchmark(root, scenarios, files={"scenarios/data/f.txt": "one\n"})


def _run(cli: Cli, tmp_path: Path, bench: Path, answers: dict[str, str]) -> str:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers))
    (tmp_path / "agent.py").write_text(ANSWERS_FROM_FILE)
    command = f"python3 {tmp_path / 'agent.py'} {path}"
    result = cli("run", str(bench), "--agent-cmd", command, "-q", *UNSANDBOXED)
    assert result.exit_code in (0, 3), result.output
    return str(json.loads(cli("runs", "--format", "json").output)[0]["id"])


def _edit_b_and_f(store: Store, bench: Path) -> None:
    """b's check changes through an accepted proposal (1.0 -> 1.1); f's fixture by hand."""
    changed_b = scenario("b", "B")
    accept(store, propose_update(store, bench, scenarios=[changed_b]).id, by="test")
    (bench / "scenarios" / "data" / "f.txt").write_text("two\n")


def test_one_scenario_edited_compares_the_others_and_names_it(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = _bench(tmp_path / "bench")
    before = load_benchmark(bench)
    hashes = {s.id: before.scenario_hash(s) for s in before.scenarios}
    first = _run(cli, tmp_path, bench, {s: s for s in IDS})  # all pass
    _edit_b_and_f(store, bench)
    after = load_benchmark(bench)
    assert after.version == "1.1"  # the accepted proposal bumped it
    same = [s for s in IDS if s not in "bf"]
    assert [s.id for s in after.scenarios if after.scenario_hash(s) != hashes[s.id]] == ["b", "f"]
    # a now fails (a real regression on an unchanged scenario); b fails its new check
    second = _run(cli, tmp_path, bench, {**{s: s for s in IDS}, "a": "wrong"})

    recorded = final_outcomes(store, [second])
    assert recorded["a", 1].scenario_hash == hashes["a"]  # stored with each attempt
    assert recorded["b", 1].scenario_hash == after.scenario_hash(after.scenarios[1])

    comparison = compare_runs(store, [store.get_run(first), store.get_run(second)])
    [candidate] = comparison.candidates
    assert candidate.changed_scenarios == ["b", "f"] and not candidate.changed_paired
    assert candidate.scenario_versions == "per scenario"
    assert candidate.paired == len(same) and candidate.pass_to_fail == 1  # a; b is not a flip
    [row_b] = [row for row in comparison.scenarios if row.scenario_id == "b"]
    assert row_b.changed == [True] and row_b.flips == [None]

    shown = cli("compare", first, second)  # was: refused, exit 2 (different version)
    assert shown.exit_code == 0, shown.output
    flat = " ".join(shown.output.split())
    assert (
        f"run {second[:8]}: 2 scenarios changed since the baseline (own content hash), "
        "not paired: b, f" in flat
    )
    assert "failed (scenario changed)" in flat
    payload = json.loads(cli("compare", first, second, "--format", "json").output)
    assert payload["candidates"][0]["changed_scenarios"] == ["b", "f"]

    history = json.loads(cli("history", "fixture-bench", "--format", "json").output)
    assert [point["changed_scenarios"] for point in history] == [None, ["b", "f"]]
    markdown = cli("history", "fixture-bench", "--format", "md").output
    assert "| 1.1 (new version; 2 scenarios changed: b, f) |" in markdown


def test_a_file_no_scenario_names_changes_no_scenario(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = _bench(tmp_path / "bench")
    first = _run(cli, tmp_path, bench, {s: s for s in IDS})
    (bench / "README.md").write_text("notes\n")  # the whole hash changes, no scenario's
    second = _run(cli, tmp_path, bench, {**{s: s for s in IDS}, "c": "wrong"})
    assert store.get_run(first).benchmark_hash != store.get_run(second).benchmark_hash
    shown = cli("compare", first, second, "--format", "md")  # was: refused (content hash)
    assert shown.exit_code == 0, shown.output
    assert "but no scenario the runs share changed: all paired" in shown.output
    payload = json.loads(cli("compare", first, second, "--format", "json").output)
    [candidate] = payload["candidates"]
    assert (candidate["paired"], candidate["pass_to_fail"]) == (len(IDS), 1)
    assert candidate["changed_scenarios"] == []
    history = json.loads(cli("history", "fixture-bench", "--format", "json").output)
    assert history[1]["changed_scenarios"] == []


def test_every_scenario_changed_or_unknown_is_refused_as_before(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = _bench(tmp_path / "bench")
    first = _run(cli, tmp_path, bench, {s: s for s in IDS})
    _edit_b_and_f(store, bench)
    second = _run(cli, tmp_path, bench, {s: s for s in IDS})
    with store.engine.begin() as connection:  # as if recorded before migration 0015
        connection.execute(
            update(attempts).where(attempts.c.run_id == first).values(scenario_hash=None)
        )
    refused = cli("compare", first, second)
    assert refused.exit_code == 2
    flat = " ".join(refused.output.split())
    assert "recorded before per-scenario hashes" in flat and "whole-benchmark hash decides" in flat
    allowed = cli("compare", first, second, "--allow-version-mismatch", "--format", "md")
    assert allowed.exit_code == 0, allowed.output
    assert "the whole-benchmark version decides" in allowed.output
    [point] = json.loads(cli("history", "fixture-bench", "--format", "json").output)[1:]
    assert point["changed_scenarios"] is None  # unknown, not "none changed"

    with store.engine.begin() as connection:  # every shared scenario of another hash
        connection.execute(
            update(attempts).where(attempts.c.run_id == first).values(scenario_hash="sha256:0")
        )
    everything = cli("compare", first, second)
    assert everything.exit_code == 2
    assert "changed: nothing is left to pair" in " ".join(everything.output.split())


def test_an_edited_record_of_an_imported_source_changes_its_scenario_only(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    root = tmp_path / "imported"
    (root / "data").mkdir(parents=True)
    (root / "benchmark.yaml").write_text(
        "name: gsm\nversion: '1'\nformat: gsm8k\nsource: data/test.jsonl\n", encoding="utf-8"
    )
    records = [
        {"question": f"What is {n} + 1?", "answer": f"{n} + 1\n#### {n + 1}"} for n in (1, 2)
    ]
    source = root / "data" / "test.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    before = load_benchmark(root)
    first = [before.scenario_hash(s) for s in before.scenarios]
    assert cli("run", str(root), "--agent", "oracle", "-q").exit_code == 0
    run_before = store.resolve_run("latest")
    records[1]["question"] = "What is 2 + 1, exactly?"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    after = load_benchmark(root)
    assert before.content_hash != after.content_hash  # the source's hash is part of it
    second = [after.scenario_hash(s) for s in after.scenarios]
    assert first[0] == second[0] and first[1] != second[1]

    # the source hash each run records (its provenance) changes with the edited record
    assert cli("run", str(root), "--agent", "oracle", "-q").exit_code == 0
    run_after = store.resolve_run("latest")
    recorded = [
        run.settings["benchmark_provenance"]["source_sha256"] for run in (run_before, run_after)
    ]
    assert before.provenance and after.provenance
    assert recorded == [before.provenance["source_sha256"], after.provenance["source_sha256"]]
    assert recorded[0] != recorded[1]
    # and compare pairs the unchanged record only, naming the edited one
    [candidate] = compare_runs(store, [run_before, run_after]).candidates
    assert candidate.paired == 1 and len(candidate.changed_scenarios) == 1
