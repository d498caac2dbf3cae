"""The audit's accuracy is strict by default (issue 22, item 8): on ITBench-format files imported
with `benchyard import itbench`, an agent that names the true root cause plus a wrong entity
(hedging) does not pass, and a victim service (scenario 1's frontend-proxy, which ITBench's v1
groups accept through an alias) is not accepted for the cause unless v1 groups are asked for. The
lenient figure is reported beside it under its own name, and the artefact says which rule it
used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.support import UNSANDBOXED, Cli
from tests.unit.sre.itbench_dirs import small_itbench

AGENT = """
import json, os, sys
print(json.dumps({"root_causes": json.load(open(sys.argv[1]))[os.environ["BENCHYARD_SCENARIO_ID"]]}))
"""
WRONG = {"kind": "Service", "name": "checkout", "namespace": "otel-demo"}
VICTIM = {"kind": "Service", "name": "frontend-proxy", "namespace": "otel-demo"}


def _imported(tmp_path: Path, cli: Cli, *options: str) -> tuple[Path, dict[str, list[Any]]]:
    """The small ITBench copy imported; each scenario's true root causes, from its reference."""
    out = tmp_path / "itbench-sre"
    source = small_itbench(tmp_path / "src")
    result = cli("import", "itbench", str(source), "-o", str(out), *options, db=False)
    assert result.exit_code == 0, result.output
    truths = {}
    for path in sorted((out / "scenarios").glob("*.yaml")):
        for scenario in yaml.safe_load(path.read_text(encoding="utf-8")):
            truths[scenario["id"]] = json.loads(scenario["reference"])["root_causes"]
    return out, truths


def _audit(tmp_path: Path, cli: Cli, bench: Path, answers: dict[str, list[Any]]) -> Any:
    (tmp_path / "answers.json").write_text(json.dumps(answers), encoding="utf-8")
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    command = f"python3 {tmp_path / 'agent.py'} {tmp_path / 'answers.json'}"
    cli("run", str(bench), "--agent-cmd", command, "-q", *UNSANDBOXED)
    result = cli("report", "latest", "--format", "audit")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_itbench_strict_accuracy_does_not_reward_a_wrong_entity_beside_the_right_one(
    tmp_path: Path, cli: Cli
) -> None:
    bench, truths = _imported(tmp_path, cli)
    hedged = {sid: [*truth, WRONG] if truth else [] for sid, truth in truths.items()}
    audit = _audit(tmp_path, cli, bench, hedged)
    assert audit["accuracy_rule"] == "strict"
    assert audit["counted"] == 4  # three incidents and a false alarm (named nothing: right)
    assert (audit["passed"], audit["accuracy"]) == (1, 0.25)
    assert (audit["passed_lenient"], audit["accuracy_lenient"]) == (4, 1.0)  # was `accuracy`
    assert audit["false_positive_rate"] == 0.5  # 3 wrong of 6 named
    assert audit["root_cause"]["v1_group_attempts"] == 0


def test_itbench_v1_groups_are_opt_in_a_victim_is_not_the_cause(tmp_path: Path, cli: Cli) -> None:
    bench, truths = _imported(tmp_path, cli)
    victim = {**truths, "scenario-1": [VICTIM]}  # frontend-proxy suffers the flood, it is no cause
    audit = _audit(tmp_path, cli, bench, victim)
    assert (audit["passed"], audit["counted"]) == (3, 4)
    assert audit["root_cause"]["false_positives"] == 1

    widened, _ = _imported(tmp_path / "v1", cli, "--option", "v1_groups=true")
    audit = _audit(tmp_path, cli, widened, victim)
    assert (audit["passed"], audit["counted"]) == (4, 4)  # the v1 alias accepts it, as asked
    assert audit["root_cause"]["v1_group_attempts"] == 1  # scenario 1, the one with v1 groups
