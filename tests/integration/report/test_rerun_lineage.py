"""The README's order, `run`, `rerun --failed`, `compare latest~1 latest`, compares the full run
with the rerun merged with it, and says so; the rerun read alone is refused, with the reason; the
report, `runs` and JUnit name the lineage."""

from __future__ import annotations

import json
import re
from pathlib import Path

from benchyard.store.store import Store
from tests.support import UNSANDBOXED, Cli, scenario, write_benchmark

ANSWERS_FROM_FILE = """
import json, os, sys
answers = json.load(open(sys.argv[1]))
answer = answers.get(os.environ["BENCHYARD_SCENARIO_ID"], "")
if answer == "CRASH":
    sys.exit(1)
print(answer)
"""


def _run_then_rerun(tmp_path: Path, cli: Cli, store: Store) -> tuple[str, str]:
    """A full run (a, b pass; c, d fail), then `rerun --failed` of its two failures, which pass."""
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"a": "a", "b": "b", "c": "wrong", "d": "CRASH"}))
    (tmp_path / "agent.py").write_text(ANSWERS_FROM_FILE)
    bench = write_benchmark(tmp_path / "bench", [scenario(s, s) for s in "abcd"])
    command = f"python3 {tmp_path / 'agent.py'} {answers}"
    cli("run", str(bench), "--agent-cmd", command, "-q", *UNSANDBOXED)  # exit 3: c, d failed
    first = store.resolve_run("latest").id
    answers.write_text(json.dumps({"a": "CRASH", "b": "CRASH", "c": "c", "d": "d"}))
    assert cli("rerun", "latest", "--failed", "-q", *UNSANDBOXED).exit_code in (0, 3)
    second = store.resolve_run("latest").id
    return first, second


def test_compare_after_rerun_failed_merges_the_rerun_with_its_source(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    """Was: the 2-attempt rerun alone against the 4-attempt run, 'no significant change (McNemar
    p = 0.5)' on 2 pairs, with nothing saying that the rerun was partial."""
    first, second = _run_then_rerun(tmp_path, cli, store)

    shown = cli("compare", "latest~1", "latest")
    assert shown.exit_code == 0, shown.output
    assert f"run {second[:8]}: rerun of {first[:8]}; merged: {first[:8]} + {second[:8]}" in (
        shown.output
    )
    payload = json.loads(cli("compare", "latest~1", "latest", "--format", "json").output)
    [candidate] = payload["candidates"]
    assert candidate["run"]["merged_runs"] == [first, second]
    assert candidate["run"]["lineage"] == [f"rerun of {first[:8]}"]
    assert candidate["run"]["attempt_count"] == 4  # the merged run's, not the rerun's 2
    assert (candidate["paired"], candidate["fail_to_pass"], candidate["pass_to_fail"]) == (4, 2, 0)
    assert candidate["run"]["partial"] is False

    alone = cli("compare", "latest~1", "latest", "--no-merge")
    assert alone.exit_code == 2
    [line] = alone.output.strip().splitlines()
    assert line.startswith(f"error: run {second[:8]} is a rerun of {first[:8]} (2 attempts) read ")
    assert "--allow-partial" in line
    forced = cli("compare", "latest~1", "latest", "--no-merge", "--allow-partial")
    assert forced.exit_code == 0, forced.output


def test_runs_report_and_junit_name_the_lineage(tmp_path: Path, cli: Cli, store: Store) -> None:
    first, second = _run_then_rerun(tmp_path, cli, store)

    listed = {e["id"]: e for e in json.loads(cli("runs", "--format", "json").output)}
    assert listed[second]["lineage"] == [f"rerun of {first[:8]}"]
    assert listed[first]["lineage"] == []
    assert f"rerun of {first[:8]}" in cli("runs").output

    markdown = cli("report", "latest", "--merged", "--format", "md").output
    assert f"| {second[:8]} (merged) |" in markdown
    assert f"- run {second[:8]}: rerun of {first[:8]}; merged: {first[:8]} + {second[:8]}" in (
        markdown
    )
    table = cli("report", "latest", "--merged").output
    assert re.search(rf"lineage +rerun of {first[:8]} *\n", table)
    assert re.search(rf"merged +{first[:8]} \+ {second[:8]} \(each rerun's", table)

    xml = cli("report", first, second, "--format", "junit").output
    names = [
        line.split('name="')[1].split('"')[0] for line in xml.splitlines() if "<testsuite " in line
    ]
    assert len(names) == 2 and len(set(names)) == 2  # CI keys results by suite name
    assert names[1].endswith(f"/ run {second[:8]} (rerun of {first[:8]})")
