"""`rescore` grades the recorded answers again after a wrong reference is fixed: exactly the
affected attempts flip, into a new run linked to the original, and the agent is never called."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from benchyard.store.store import Store
from tests.support import Cli, write_benchmark

AGENT = 'echo call >> {calls}; echo "ans-$BENCHYARD_SCENARIO_ID-$BENCHYARD_TURN"'


def _scenarios(broken: bool) -> list[dict[str, Any]]:
    """Six one-turn scenarios and a two-turn one; while `broken`, b, e and the first turn of the
    two-turn one expect a wrong value."""

    def expected(sid: str, turn: int = 1) -> str:
        return "oops" if broken and sid in ("b", "e", "talk") and turn == 1 else f"ans-{sid}-{turn}"

    one_turn = [
        {
            "id": sid,
            "stimulus": f"answer {sid}",
            "checks": [{"type": "equals", "value": expected(sid)}],
            "reference": f"ans-{sid}-1",
        }
        for sid in "abcdef"
    ]
    two_turns = {
        "id": "talk",
        "stimulus": {"turns": ["first", "second"]},
        "checks": [
            {"type": "equals", "value": expected("talk", 1), "turn": 1},
            {"type": "equals", "value": expected("talk", 2)},
        ],
        "reference": ["ans-talk-1", "ans-talk-2"],
    }
    return [*one_turn, two_turns]


def test_rescore_flips_exactly_the_fixed_attempts(tmp_path: Path, cli: Cli, store: Store) -> None:
    calls = tmp_path / "calls"
    bench = write_benchmark(tmp_path / "bench", _scenarios(broken=True))
    agent = AGENT.format(calls=calls)
    ran = cli(
        "run", str(bench), "--agent-cmd", agent, "--sandbox", "none", "--allow-unsandboxed", "-q"
    )
    assert ran.exit_code == 0, ran.output
    original = store.resolve_run("latest")
    verdicts = {a.scenario_id: a.verdict for a in store.attempts(original.id)}
    assert [sid for sid, v in sorted(verdicts.items()) if v == "failed"] == ["b", "e", "talk"]
    agent_calls = calls.read_text()

    write_benchmark(bench, _scenarios(broken=False))  # the references fixed in place
    rescored = cli("rescore", original.id[:8], "-q")
    assert rescored.exit_code == 0, rescored.output
    assert "rescored run" in rescored.output and "3 flipped" in rescored.output
    assert calls.read_text() == agent_calls  # the agent was not called again

    new = store.resolve_run("latest")
    assert (new.rescored_from, new.status, new.parent_run_id) == (original.id, "finished", None)
    assert new.benchmark_hash != original.benchmark_hash
    after = {a.scenario_id: a for a in store.attempts(new.id)}
    assert {sid: a.verdict for sid, a in after.items()} == {sid: "passed" for sid in verdicts}
    before = {a.scenario_id: a for a in store.attempts(original.id)}
    for sid, attempt in after.items():
        assert attempt.answer == before[sid].answer
        assert attempt.turns == before[sid].turns
    assert after["talk"].answers == ["ans-talk-1\n", "ans-talk-2\n"]  # as printed
    assert [c.passed for c in after["talk"].checks] == [True, True]

    report = json.loads(cli("report", new.id, "--format", "json").output)
    assert report["run"]["rescored_from"] == original.id
    assert f"rescores run {original.id}" in cli("show", new.id).output
    comparison = cli("compare", original.id, new.id, "--allow-version-mismatch", "--format", "json")
    flips = [
        row["scenario_id"] for row in json.loads(comparison.output)["scenarios"] if row["flips"][0]
    ]
    assert flips == ["b", "e", "talk"]


def test_rescore_with_an_unchanged_benchmark_flips_nothing(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    bench = write_benchmark(tmp_path / "bench", _scenarios(broken=True))
    cli("run", str(bench), "--agent", "oracle", "-q")
    original = store.resolve_run("latest")
    result = cli("rescore", "latest", "--benchmark", str(bench), "-q")
    assert result.exit_code == 0, result.output
    assert "0 flipped" in result.output
    new = store.resolve_run("latest")
    assert new.benchmark_hash == original.benchmark_hash
    verdicts = [a.verdict for a in store.attempts(new.id)]
    assert verdicts == [a.verdict for a in store.attempts(original.id)]
    assert verdicts.count("failed") == 3  # the oracle's answers against the broken checks


def test_rescore_grades_a_recorded_patch_in_a_fresh_sandbox(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    library = Path(__file__).parents[3] / "src" / "benchyard" / "library" / "starter"
    bench = tmp_path / "starter"
    shutil.copytree(library, bench)
    ran = cli("run", str(bench), "--agent", "oracle", "--filter", "id:coding-repo-001", "-q")
    assert ran.exit_code == 0, ran.output
    original = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert [a.verdict for a in original] == ["passed"]
    assert original[0].patch and "pagination.py" in original[0].patch

    hidden = bench / "scenarios/fixtures/coding/pagination/hidden/test_partial_pages.py"
    hidden.write_text(hidden.read_text().replace("page_count(10, 3), 4", "page_count(10, 3), 5"))
    rescored = cli("rescore", "latest", "-q")
    assert rescored.exit_code == 0, rescored.output
    assert "coding-repo-001 (epoch 1) no longer passes" in rescored.output
    [again] = store.attempts(store.resolve_run("latest").id, with_evidence=True)
    assert again.patch == original[0].patch
    checks = {check.check_type: check for check in again.checks}
    assert not checks["tests"].passed and "test_partial_last_page_counts" in checks["tests"].reason
    assert checks["diff_quality"].passed  # the recorded patch applied as it was
