"""`benchyard gate` gives each decision its exit code and writes the reasons; `report --format
audit` writes one artefact per model; a malformed policy is one clear error per problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchyard.store.store import Store
from tests.support import Cli
from tests.unit.audit.helpers import details, write_run
from tests.unit.audit.test_gate import POLICY


def runs_for_each_decision(store: Store) -> dict[str, str]:
    built = {}
    decisions = (
        ("full", 40, "aa01"),
        ("canary", 36, "bb02"),
        ("human-in-the-loop", 28, "cc03"),
        ("no-deploy", 10, "dd04"),
    )
    for name, passed, prefix in decisions:
        run_id = f"{prefix}0000000000"
        outcomes = [
            {
                "verdict": "passed" if i < passed else "failed",
                "details": details(1, int(i < passed)),
            }
            for i in range(40)
        ]
        write_run(store, run_id, outcomes, agent_name=f"agent-{name}")
        built[name] = run_id
    return built


@pytest.mark.parametrize(
    ("decision", "code"),
    [("full", 0), ("canary", 10), ("human-in-the-loop", 11), ("no-deploy", 12)],
)
def test_gate_decision_and_exit_code(
    tmp_path: Path, cli: Cli, store: Store, decision: str, code: int
) -> None:
    run_id = runs_for_each_decision(store)[decision]
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    out = tmp_path / "decision.json"
    result = cli("gate", run_id, "--policy", str(policy), "-o", str(out))
    assert result.exit_code == code, result.output
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["decision"] == decision and written["exit_code"] == code
    assert written["run_id"] == run_id and written["policy_sha256"]
    assert written["reasons"] and all(
        {"level", "rule", "required", "actual", "met"} <= set(r) for r in written["reasons"]
    )
    assert result.output.strip().splitlines()[-1].startswith(decision)


def test_a_malformed_policy_is_refused_with_file_line_field(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    run_id = runs_for_each_decision(store)["full"]
    policy = tmp_path / "policy.yaml"
    policy.write_text("levels:\n  full:\n    min_accuracy_lower_bound: high\n", encoding="utf-8")
    result = cli("gate", run_id, "--policy", str(policy))
    assert result.exit_code == 2  # docs/exit-codes.md: a bad policy is refused
    assert f"{policy}:3: levels.full.min_accuracy_lower_bound: " in result.output
    assert "1 problem" in result.output


def test_report_format_audit_writes_one_file_per_model(
    tmp_path: Path, cli: Cli, store: Store
) -> None:
    built = runs_for_each_decision(store)
    out = tmp_path / "audits"
    result = cli("report", built["full"], built["canary"], "--format", "audit", "-o", str(out))
    assert result.exit_code == 0, result.output
    files = sorted(path.name for path in out.iterdir())
    assert files == sorted(
        [
            f"agent-canary-{built['canary'][:8]}.audit.json",
            f"agent-full-{built['full'][:8]}.audit.json",
        ]
    )
    audit = json.loads((out / files[1]).read_text(encoding="utf-8"))
    assert {
        "accuracy",
        "avg_turns",
        "false_positive_rate",
        "task_count",
        "accuracy_ci95",
        "cost",
        "flags",
        "trajectories",
    } <= set(audit)
    assert audit["task_count"] == 40 and audit["accuracy"] == 1.0
    assert audit["benchmark"]["content_hash"] == "sha256:00"
    single = cli("report", built["canary"], "--format", "audit")
    assert json.loads(single.output)["accuracy"] == pytest.approx(0.9)
