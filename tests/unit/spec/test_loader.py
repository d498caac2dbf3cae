"""Loading valid benchmarks: file shapes, stimulus and fixture forms, limits, references, the
content hash, and finding benchmarks by name."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from pydantic import ValidationError

from benchyard.benchmarks.loader import load_benchmark
from benchyard.spec.loader import (
    DEFAULT_MAX_TURNS,
    DEFAULT_TIMEOUT_SEC,
    Benchmark,
    resolve_benchmark_path,
)
from benchyard.spec.models import FixtureFile, Scenario
from benchyard.spec.problems import BenchmarkNotFound
from tests.support import scenario, write_benchmark

MANIFEST = 'name: good\nversion: "1.0"\n'


def write(root: Path, files: dict[str, str], manifest: str = MANIFEST) -> Path:
    """A benchmark directory from exact file texts (dedented), so that lines are deliberate."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "benchmark.yaml").write_text(textwrap.dedent(manifest), encoding="utf-8")
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def by_id(benchmark: Benchmark) -> dict[str, Scenario]:
    return {item.id: item for item in benchmark.scenarios}


# --- file shapes --------------------------------------------------------------------------------


def test_a_yaml_list_of_scenarios(tmp_path: Path) -> None:
    root = write(
        tmp_path / "b",
        {
            "scenarios/main.yaml": """\
                - id: one
                  category: math
                  tags: [add, easy-ones]
                  difficulty: easy
                  description: One plus one.
                  stimulus: What is 1 + 1?
                  checks:
                    - type: numeric
                      value: 2
                  reference: "2"

                - id: two
                  stimulus: What is 2 + 2?
                  checks: [{type: numeric, value: 4, name: sum, weight: 2}]
                """
        },
    )
    benchmark = load_benchmark(root)
    assert (benchmark.name, benchmark.version) == ("good", "1.0")
    assert [item.id for item in benchmark.scenarios] == ["one", "two"]
    one, two = benchmark.scenarios
    assert (one.category, one.tags, one.difficulty) == ("math", ["add", "easy-ones"], "easy")
    assert one.description == "One plus one."
    assert (two.category, two.tags, two.difficulty) == ("general", [], "medium")
    assert two.checks[0].label == "sum" and two.checks[0].weight == 2
    assert two.checks[0].params == {"value": 4}
    assert benchmark.locations["one"].line == 1
    assert benchmark.locations["two"].line == 12
    assert benchmark.locations["two"].file == root.resolve() / "scenarios" / "main.yaml"


def test_a_yaml_file_holding_one_scenario_mapping(tmp_path: Path) -> None:
    root = write(
        tmp_path / "b",
        {
            "scenarios/single.yml": """\
                # One scenario per file.
                id: alone
                stimulus: Reply with ok.
                checks:
                  - type: equals
                    value: ok
                """
        },
    )
    benchmark = load_benchmark(root)
    assert [item.id for item in benchmark.scenarios] == ["alone"]
    assert benchmark.locations["alone"].line == 2


def test_a_yaml_file_with_a_scenarios_key(tmp_path: Path) -> None:
    root = write(
        tmp_path / "b",
        {
            "scenarios/grouped.yaml": """\
                scenarios:
                  - id: first
                    stimulus: Reply with a.
                    checks: [{type: equals, value: a}]
                  - id: second
                    stimulus: Reply with b.
                    checks: [{type: equals, value: b}]
                """
        },
    )
    benchmark = load_benchmark(root)
    assert [item.id for item in benchmark.scenarios] == ["first", "second"]
    assert [benchmark.locations[sid].line for sid in ("first", "second")] == [2, 5]


def test_a_jsonl_file_one_scenario_a_line(tmp_path: Path) -> None:
    records = [
        {"id": "j1", "stimulus": "What is 1 + 1?", "checks": [{"type": "numeric", "value": 2}]},
        {
            "id": "j2",
            "stimulus": {"turns": ["Say A.", "Say B."]},
            "checks": [{"type": "equals", "value": "B"}],
            "reference": ["A", "B"],
        },
    ]
    text = json.dumps(records[0]) + "\n\n" + json.dumps(records[1]) + "\n"
    root = write(tmp_path / "b", {"scenarios/cases.jsonl": text})
    benchmark = load_benchmark(root)
    assert [item.id for item in benchmark.scenarios] == ["j1", "j2"]
    assert benchmark.locations["j2"].line == 3
    assert by_id(benchmark)["j2"].stimulus.kind == "conversation"


def test_files_load_in_path_order_across_patterns_and_subdirectories(tmp_path: Path) -> None:
    one = "- {id: %s, stimulus: hi, checks: [{type: equals, value: x}]}\n"
    root = write(
        tmp_path / "b",
        {
            "scenarios/b.yaml": one % "from-b",
            "scenarios/a.yaml": one % "from-a",
            "scenarios/deeper/c.yml": one % "from-c",
            "scenarios/d.jsonl": '{"id": "from-d", "stimulus": "hi", "checks": [{"type": "equals", "value": "x"}]}\n',
            "scenarios/fixtures/not-a-scenario.yaml": "this: is data for an agent\n",
            "scenarios/README.md": "Not a scenario file.\n",
        },
    )
    benchmark = load_benchmark(root)
    assert [item.id for item in benchmark.scenarios] == ["from-a", "from-b", "from-c", "from-d"]


def test_manifest_patterns_choose_the_scenario_files(tmp_path: Path) -> None:
    """A pattern that also matches benchmark.yaml does not read it as a scenario file."""
    root = write(
        tmp_path / "b",
        {
            "cases.yaml": "- {id: root-level, stimulus: hi, checks: [{type: equals, value: x}]}\n",
            "scenarios/ignored.yaml": "not: read\n",
        },
        manifest='name: good\nversion: "1.0"\nscenarios: ["*.yaml"]\n',
    )
    benchmark = load_benchmark(root)
    assert [item.id for item in benchmark.scenarios] == ["root-level"]
    assert benchmark.manifest.scenarios == ["*.yaml"]


def test_yaml_anchors_and_merge_keys_are_not_duplicate_keys(tmp_path: Path) -> None:
    root = write(
        tmp_path / "b",
        {
            "scenarios/main.yaml": """\
                - &base
                  id: base
                  category: shared
                  stimulus: Reply with ok.
                  checks: [{type: equals, value: ok}]
                - <<: *base
                  id: derived
                  stimulus: Reply with OK.
                """
        },
    )
    derived = by_id(load_benchmark(root))["derived"]
    assert derived.category == "shared"
    assert derived.stimulus.turns == ["Reply with OK."]


def test_a_manifest_version_written_as_a_number_becomes_text(tmp_path: Path) -> None:
    root = write_benchmark(tmp_path / "b", [scenario("s1", "ok")])
    (root / "benchmark.yaml").write_text("name: good\nversion: 2\n", encoding="utf-8")
    assert load_benchmark(root).version == "2"


def test_numeric_scenario_ids_become_text(tmp_path: Path) -> None:
    root = write(
        tmp_path / "b",
        {"scenarios/main.yaml": "- {id: 17, stimulus: hi, checks: [{type: equals, value: x}]}\n"},
    )
    assert [item.id for item in load_benchmark(root).scenarios] == ["17"]


# --- stimulus forms ------------------------------------------------------------------------------


def test_stimulus_short_forms(tmp_path: Path) -> None:
    root = write(
        tmp_path / "b",
        {
            "scenarios/main.yaml": """\
                - id: text
                  stimulus: What is 2 + 2?
                  checks: [{type: numeric, value: 4}]
                - id: message
                  stimulus: {message: Hello., system: Be brief.}
                  checks: [{type: contains, value: hello}]
                - id: turns
                  stimulus:
                    system: You are a calculator.
                    turns: [Remember 3., Add 4.]
                  checks: [{type: numeric, value: 7, turn: 2}]
                - id: task
                  stimulus:
                    task: Fix the failing test in the workdir.
                  checks: [{type: contains, value: fixed}]
                - id: explicit
                  stimulus: {kind: task, turns: [Do it.]}
                  checks: [{type: contains, value: done}]
                """
        },
    )
    found = by_id(load_benchmark(root))
    shapes = {
        sid: (item.stimulus.kind, item.stimulus.turns, item.stimulus.system)
        for sid, item in found.items()
    }
    assert shapes == {
        "text": ("message", ["What is 2 + 2?"], None),
        "message": ("message", ["Hello."], "Be brief."),
        "turns": ("conversation", ["Remember 3.", "Add 4."], "You are a calculator."),
        "task": ("task", ["Fix the failing test in the workdir."], None),
        "explicit": ("task", ["Do it."], None),
    }
    assert found["turns"].checks[0].turn == 2


# --- fixtures ------------------------------------------------------------------------------------


def test_fixture_forms(tmp_path: Path) -> None:
    root = write(
        tmp_path / "b",
        {
            "scenarios/data/report.txt": "Revenue: 4.2M\n",
            "scenarios/data/sheet.csv": "a,b\n1,2\n",
            "shared/glossary.md": "# Terms\n",
            "scenarios/main.yaml": """\
                - id: files
                  stimulus: Read the files.
                  fixtures:
                    files:
                      - data/report.txt
                      - src: data/sheet.csv
                        dest: input/table.csv
                      - src: ../shared/glossary.md
                      - dest: notes/todo.txt
                        content: |
                          buy milk
                  checks: [{type: contains, value: revenue}]
                """,
        },
    )
    benchmark = load_benchmark(root)
    files = benchmark.scenarios[0].fixtures.files
    assert [(f.src, f.dest, f.content) for f in files] == [
        ("data/report.txt", "report.txt", None),
        ("data/sheet.csv", "input/table.csv", None),
        ("../shared/glossary.md", "glossary.md", None),
        (None, "notes/todo.txt", "buy milk\n"),
    ]
    assert benchmark.scenario_dir(benchmark.scenarios[0]) == root.resolve() / "scenarios"


def test_fixture_models_refuse_bad_shapes_outside_the_loader() -> None:
    with pytest.raises(ValidationError, match="give exactly one of 'src' or 'content'"):
        FixtureFile.model_validate({"dest": "x"})
    with pytest.raises(ValidationError, match="must stay inside the workdir"):
        FixtureFile.model_validate({"content": "x", "dest": "/etc/x"})


# --- defaults and limits -------------------------------------------------------------------------


def test_limits_fall_back_to_defaults_then_to_benchyard(tmp_path: Path) -> None:
    root = write_benchmark(
        tmp_path / "b",
        [
            scenario("own", "ok", limits={"timeout_sec": 5, "max_turns": 2}),
            scenario("half", "ok", limits={"max_turns": 3}),
            scenario("none", "ok"),
        ],
        defaults={"timeout_sec": 12.5},
    )
    benchmark = load_benchmark(root)
    found = by_id(benchmark)
    limits = {
        sid: (benchmark.limits_for(item).timeout_sec, benchmark.limits_for(item).max_turns)
        for sid, item in found.items()
    }
    assert limits == {
        "own": (5, 2),
        "half": (12.5, 3),
        "none": (12.5, DEFAULT_MAX_TURNS),
    }
    assert benchmark.manifest.defaults.max_turns is None


def test_limits_without_any_defaults(tmp_path: Path) -> None:
    benchmark = load_benchmark(write_benchmark(tmp_path / "b", [scenario("s1", "ok")]))
    limits = benchmark.limits_for(benchmark.scenarios[0])
    assert (limits.timeout_sec, limits.max_turns) == (DEFAULT_TIMEOUT_SEC, DEFAULT_MAX_TURNS)
    assert benchmark.manifest.description == ""


def test_a_scenario_limit_lets_it_have_more_turns_than_the_default(tmp_path: Path) -> None:
    turns = {"turns": ["a", "b", "c"]}
    root = write_benchmark(
        tmp_path / "b",
        [scenario("long", "ok", stimulus=turns, limits={"max_turns": 3})],
        defaults={"max_turns": 2},
    )
    assert len(load_benchmark(root).scenarios[0].stimulus.turns) == 3


# --- references ----------------------------------------------------------------------------------


def test_reference_answers_per_turn(tmp_path: Path) -> None:
    turns = {"turns": ["Say A.", "Say B.", "Say C."]}
    root = write_benchmark(
        tmp_path / "b",
        [
            scenario("per-turn", "C", stimulus=turns, reference=["A", "B", "C"]),
            scenario("last-only", "C", stimulus=turns, reference="C"),
            scenario("one-turn", "ok"),
            {**scenario("no-reference", "ok"), "reference": None},
        ],
    )
    found = by_id(load_benchmark(root))
    assert found["per-turn"].reference_answers() == ["A", "B", "C"]
    assert found["last-only"].reference_answers() == ["", "", "C"]
    assert found["one-turn"].reference_answers() == ["ok"]
    assert found["no-reference"].reference_answers() is None


def test_turn_checks_still_guard_scenarios_built_in_code() -> None:
    """Outside the loader (which reports each at its own line), the model refuses them at once."""
    data = {
        "id": "s1",
        "stimulus": {"turns": ["a", "b"]},
        "reference": ["x"],
        "checks": [{"type": "equals", "value": "x", "turn": 3}],
    }
    with pytest.raises(ValidationError) as raised:
        Scenario.model_validate(data)
    message = str(raised.value)
    assert "reference: 1 answer for 2 user turns" in message
    assert "checks[0].turn: turn 3 does not exist: the stimulus has 2 user turns" in message


# --- content hash --------------------------------------------------------------------------------

SCENARIO_TEXT = """\
- id: hashed
  stimulus: Reply with ok.
  checks:
    - type: equals
      value: ok
"""


def hashed(root: Path, text: str, newline: str = "\n") -> str:
    write(root, {})
    path = root / "scenarios" / "main.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.replace("\n", newline).encode())
    return load_benchmark(root).content_hash


def test_content_hash_is_the_same_for_crlf_and_lf(tmp_path: Path) -> None:
    lf = hashed(tmp_path / "lf", SCENARIO_TEXT)
    crlf = hashed(tmp_path / "crlf", SCENARIO_TEXT, newline="\r\n")
    assert lf == crlf
    assert lf.startswith("sha256:") and len(lf) == len("sha256:") + 64


def test_content_hash_changes_when_a_scenario_changes(tmp_path: Path) -> None:
    before = hashed(tmp_path / "b", SCENARIO_TEXT)
    assert hashed(tmp_path / "b", SCENARIO_TEXT) == before
    after = hashed(tmp_path / "b", SCENARIO_TEXT.replace("value: ok", "value: OK"))
    assert after != before


def test_content_hash_covers_fixture_files(tmp_path: Path) -> None:
    root = write_benchmark(
        tmp_path / "b",
        [scenario("s1", "ok", fixtures={"files": ["data.txt"]})],
        files={"scenarios/data.txt": "one\n"},
    )
    before = load_benchmark(root).content_hash
    (root / "scenarios" / "data.txt").write_text("two\n", encoding="utf-8")
    assert load_benchmark(root).content_hash != before


# --- finding benchmarks --------------------------------------------------------------------------


def test_the_builtin_starter_resolves_by_name() -> None:
    benchmark = load_benchmark("starter")
    assert benchmark.name == "starter"
    assert benchmark.root.name == "starter"
    assert len(benchmark.scenarios) > 0
    assert resolve_benchmark_path("starter") == benchmark.root


def test_a_directory_or_its_manifest_resolves(tmp_path: Path) -> None:
    root = write_benchmark(tmp_path / "b", [scenario("s1", "ok")])
    assert resolve_benchmark_path(root) == root
    assert resolve_benchmark_path(root / "benchmark.yaml") == root
    assert [s.id for s in load_benchmark(str(root / "benchmark.yaml")).scenarios] == ["s1"]


def test_an_unknown_name_suggests_the_closest_builtin() -> None:
    with pytest.raises(BenchmarkNotFound) as raised:
        load_benchmark("startr")
    assert str(raised.value) == (
        "no benchmark at 'startr' (did you mean 'starter'?): give a directory holding "
        "benchmark.yaml, a built-in name (hard, sre-starter, starter), or the name of one that "
        "`benchyard benchmarks` lists here"
    )


def test_a_benchmark_listed_here_resolves_by_its_name_or_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`benchyard benchmarks` lists benchmarks/mybench (named `mine`): `run mybench` and `run
    mine` find it; a name two of them answer to is refused, naming both."""
    root = write_benchmark(tmp_path / "benchmarks" / "mybench", [scenario("s1", "ok")], name="mine")
    monkeypatch.chdir(tmp_path)
    assert resolve_benchmark_path("mybench") == root.resolve()
    assert resolve_benchmark_path("mine") == root.resolve()
    write_benchmark(tmp_path / "other" / "mybench", [scenario("s1", "ok")])
    with pytest.raises(BenchmarkNotFound, match="names several benchmarks here: give one of"):
        resolve_benchmark_path("mybench")


def test_an_unknown_name_far_from_every_builtin_has_no_suggestion(tmp_path: Path) -> None:
    with pytest.raises(BenchmarkNotFound) as raised:
        load_benchmark(tmp_path / "nothing-here")
    assert "did you mean" not in str(raised.value)
    assert "give a directory holding benchmark.yaml" in str(raised.value)


def test_a_directory_without_a_manifest_is_not_found(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    with pytest.raises(BenchmarkNotFound):
        load_benchmark(tmp_path)
