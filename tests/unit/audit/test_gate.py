"""The deploy gate: policies read with every problem at its file, line and field, and the
decision each run lands in."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchyard.audit.build import build_audit
from benchyard.audit.gate import EXIT_CODES, PolicyInvalid, decide, load_policy
from benchyard.store.store import Store
from tests.unit.audit.helpers import details, write_run

POLICY = """\
min_tasks: 20
levels:
  full:
    min_accuracy_lower_bound: 0.90
    max_false_positive_rate: 0.05
    max_avg_turns: 10
  canary:
    min_accuracy_lower_bound: 0.75
    max_false_positive_rate: 0.20
  human-in-the-loop:
    min_accuracy_lower_bound: 0.50
"""


def policy(tmp_path: Path, text: str = POLICY) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def run_with(
    store: Store, run_id: str, passed: int, total: int = 40, wrong_extra: int = 0, turns: int = 4
) -> None:
    outcomes = []
    for index in range(total):
        ok = index < passed
        extra = index < wrong_extra
        outcomes.append(
            {
                "verdict": "passed" if ok else "failed",
                "details": details(2 if extra else 1, 1 if ok else 0),
                "turns": turns,
            }
        )
    write_run(store, run_id, outcomes)


@pytest.mark.parametrize(
    ("passed", "wrong_extra", "turns", "decision"),
    [
        (40, 0, 4, "full"),  # Wilson lower bound 0.912
        (40, 0, 12, "canary"),  # too many turns for full
        # 6 passed with a wrong extra: strict accuracy 34/40 (issue 22, item 8; was 40/40 and
        # canary on the false positives alone), lower bound 0.709, and 6/46 = 13% false positives
        (40, 6, 4, "human-in-the-loop"),
        (36, 0, 4, "canary"),  # lower bound 0.770
        (28, 0, 4, "human-in-the-loop"),  # lower bound 0.546
        (10, 0, 4, "no-deploy"),
    ],
)
def test_each_decision(
    store: Store, tmp_path: Path, passed: int, wrong_extra: int, turns: int, decision: str
) -> None:
    run_with(store, "r1", passed, wrong_extra=wrong_extra, turns=turns)
    made = decide(build_audit(store, store.get_run("r1")), load_policy(policy(tmp_path)))
    assert made.decision == decision
    assert made.exit_code == EXIT_CODES[decision]
    assert made.summary.startswith(decision)
    if decision == "no-deploy":
        assert any(
            r.level == "human-in-the-loop" and r.rule == "min_accuracy_lower_bound" and not r.met
            for r in made.reasons
        )


def test_too_few_tasks_is_no_deploy(store: Store, tmp_path: Path) -> None:
    run_with(store, "r1", 10, total=10)
    made = decide(build_audit(store, store.get_run("r1")), load_policy(policy(tmp_path)))
    assert made.decision == "no-deploy"
    assert [(r.rule, r.required, r.actual) for r in made.reasons] == [("min_tasks", 20, 10)]


def test_exit_codes_are_distinct_from_errors() -> None:
    assert EXIT_CODES == {"full": 0, "canary": 10, "human-in-the-loop": 11, "no-deploy": 12}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "levels:\n  full:\n    min_acurracy: 0.9\n",
            ":3: levels.full.min_acurracy: unknown field (rules: ",
        ),
        (
            "levels:\n  ful:\n    min_accuracy: 0.9\n",
            ":2: levels.ful: unknown level (levels: full, canary, human-in-the-loop",
        ),
        ("levels:\n  canary:\n    max_avg_turns: lots\n", ":3: levels.canary.max_avg_turns: "),
        ("levels:\n  canary:\n    min_accuracy: 1.5\n", ":3: levels.canary.min_accuracy: "),
        ("min_tasks: 5\n", ": levels: required field is missing"),
        ("levels: {}\n", ":1: levels: "),
        ("levels:\n  full: [\n", ":3: "),
        ("- full\n", ":1: expected a mapping with `levels:`"),
        (
            "min_task: 3\nlevels:\n  full: {}\n",
            ":1: min_task: unknown field (fields: min_tasks, levels)",
        ),
    ],
)
def test_malformed_policies_name_file_line_and_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = policy(tmp_path, text)
    with pytest.raises(PolicyInvalid) as caught:
        load_policy(path)
    shown = "\n".join(map(str, caught.value.problems))
    assert shown.startswith(str(path)), shown
    assert expected in shown, shown


def test_a_missing_policy_file(tmp_path: Path) -> None:
    with pytest.raises(PolicyInvalid, match="cannot read"):
        load_policy(tmp_path / "absent.yaml")
