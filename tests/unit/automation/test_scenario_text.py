"""Scenario files changed line by line: only the scenario's own lines change, comments and the
other scenarios stay byte for byte."""

from __future__ import annotations

import json

import pytest
import yaml

from benchyard.automation.scenario_text import TextRefused, append, replace, scenario_ids

LISTED = """\
# a comment on top
- id: a
  stimulus: "first"   # kept
  checks:
    - type: equals
      value: "1"

# between a and b
- id: b
  stimulus: second
  checks:
    - type: equals
      value: "2"
"""

NESTED = """\
name: ignored
scenarios:
  - id: a
    stimulus: first
    checks: [{type: equals, value: "1"}]
  - id: b
    stimulus: second
    checks: [{type: equals, value: "2"}]
extra: kept
"""

DRAFT = {"id": "a", "stimulus": "new\nlines", "checks": [{"type": "equals", "value": "9"}]}


def test_a_changed_scenario_replaces_its_own_lines_only() -> None:
    changed = replace(LISTED, ".yaml", {"a": DRAFT})
    assert changed.startswith("# a comment on top\n- id: a\n")
    assert changed.endswith(LISTED[LISTED.index("# between a and b") :])
    assert yaml.safe_load(changed)[0] == DRAFT
    assert "stimulus: |-\n    new\n    lines" in changed  # text with line breaks as a block


def test_a_removed_scenario_drops_its_lines_and_keeps_the_comments_around_it() -> None:
    changed = replace(LISTED, ".yaml", {"b": None})
    assert [s["id"] for s in yaml.safe_load(changed)] == ["a"]
    assert "# between a and b" in changed and '"first"   # kept' in changed


def test_new_scenarios_go_after_the_last_one_at_its_indentation() -> None:
    added = append(NESTED, ".yaml", [{**DRAFT, "id": "c"}])
    data = yaml.safe_load(added)
    assert [s["id"] for s in data["scenarios"]] == ["a", "b", "c"]
    assert data["extra"] == "kept" and added.endswith("extra: kept\n")
    assert "\n  - id: c\n" in added


def test_a_scenario_of_a_nested_list_is_replaced_in_place() -> None:
    changed = replace(NESTED, ".yaml", {"b": {**DRAFT, "id": "b"}})
    data = yaml.safe_load(changed)
    assert data["scenarios"][1] == {**DRAFT, "id": "b"}
    assert data["scenarios"][0]["checks"] == [{"type": "equals", "value": "1"}]


def test_a_file_of_one_scenario_is_rewritten_and_takes_no_new_one() -> None:
    single = "# one\nid: a\nstimulus: x\nchecks:\n  - type: equals\n    value: x\n"
    changed = replace(single, ".yaml", {"a": DRAFT})
    assert changed.startswith("# one\n") and yaml.safe_load(changed) == DRAFT
    with pytest.raises(TextRefused, match="single scenario"):
        append(single, ".yaml", [DRAFT])


def test_jsonl_lines_are_replaced_removed_and_added() -> None:
    text = '{"id": "a", "stimulus": "x"}\n{"id": "b", "stimulus": "y"}\n'
    changed = replace(text, ".jsonl", {"a": DRAFT, "b": None})
    changed = append(changed, ".jsonl", [{"id": "c", "stimulus": "z"}])
    assert [json.loads(line)["id"] for line in changed.splitlines()] == ["a", "c"]
    assert scenario_ids(changed, ".jsonl") == ["a", "c"]


def test_an_unknown_id_or_a_flow_style_list_is_refused() -> None:
    with pytest.raises(TextRefused, match="not in this file"):
        replace(LISTED, ".yaml", {"zz": DRAFT})
    with pytest.raises(TextRefused, match="flow style"):
        replace("[{id: a, stimulus: x}]\n", ".yaml", {"a": DRAFT})
