"""The limits on what a benchmark file may hold: text no longer than the store's columns, nesting no
deeper than MAX_DEPTH, aliases that expand a file only so far; each at its boundary, with both
YAML parsers (libyaml and PyYAML's own, which recurses)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from benchyard.benchmarks.loader import load_benchmark
from benchyard.spec import source_files
from benchyard.spec.models import (
    MAX_BENCHMARK_NAME,
    MAX_BENCHMARK_VERSION,
    MAX_CATEGORY,
    MAX_CHECK_NAME,
    MAX_CHECK_TYPE,
    MAX_SCENARIO_ID,
)
from benchyard.spec.problems import BenchmarkInvalid
from benchyard.spec.source_files import (
    MAX_DEPTH,
    NestedTooDeep,
    SpecSyntaxError,
    load_json,
    read_jsonl,
    read_yaml,
)
from benchyard.store import schema


def test_text_limits_are_the_store_columns() -> None:
    """Every scenario and manifest field stored in a length-limited column has that limit."""
    columns = {
        MAX_SCENARIO_ID: [schema.attempts.c.scenario_id, schema.attempt_queue.c.scenario_id],
        MAX_CATEGORY: [schema.attempts.c.category],
        MAX_CHECK_TYPE: [schema.check_results.c.check_type],
        MAX_CHECK_NAME: [schema.check_results.c.label],
        MAX_BENCHMARK_NAME: [schema.runs.c.benchmark_name],
        MAX_BENCHMARK_VERSION: [schema.runs.c.benchmark_version],
    }
    for limit, stored in columns.items():
        for column in stored:
            assert getattr(column.type, "length", None) == limit, column


@pytest.fixture(params=["libyaml", "pyyaml"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test with libyaml's loader (where installed) and with PyYAML's own."""
    if request.param == "pyyaml":
        monkeypatch.setattr(source_files, "_Loader", yaml.SafeLoader)
    elif not hasattr(yaml, "CSafeLoader"):
        pytest.skip("libyaml is not installed")
    return str(request.param)


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def _yaml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "file.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_yaml_nested_to_the_limit_loads(tmp_path: Path, parser: str) -> None:
    data = read_yaml(_yaml(tmp_path, f"a: {_nested(MAX_DEPTH - 1)}\n")).data
    assert source_files.nested_deeper_than(data, MAX_DEPTH - 1)
    assert not source_files.nested_deeper_than(data, MAX_DEPTH)


@pytest.mark.parametrize("levels", [MAX_DEPTH, 500, 100_000])
def test_yaml_nested_past_the_limit_is_refused_with_its_line(
    tmp_path: Path, parser: str, levels: int
) -> None:
    with pytest.raises(SpecSyntaxError) as raised:
        read_yaml(_yaml(tmp_path, f"# deep\nkey: {_nested(levels)}\n"))
    assert raised.value.line == 2
    assert f"nested more than {MAX_DEPTH} levels deep" in raised.value.message


def test_block_yaml_nested_past_the_limit_names_its_field_and_line(tmp_path: Path) -> None:
    levels = range(MAX_DEPTH + 1)  # one mapping more than allowed
    text = "".join("  " * level + f"k{level}:\n" for level in levels) + "  " * len(levels) + "v\n"
    with pytest.raises(SpecSyntaxError) as raised:
        read_yaml(_yaml(tmp_path, text))
    assert raised.value.line == 6
    assert raised.value.path == ("k0", "k1", "k2", "k3", "k4", "k5")
    assert raised.value.message == f"nested more than {MAX_DEPTH} levels deep"


def test_aliases_that_expand_too_far_are_refused(tmp_path: Path, parser: str) -> None:
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for before, name in zip("abcde", "bcdef", strict=True):
        text += f"{name}: &{name} [{', '.join([f'*{before}'] * 10)}]\n"
    with pytest.raises(SpecSyntaxError) as raised:
        read_yaml(_yaml(tmp_path, text))
    assert (raised.value.line, raised.value.path) == (6, ("f",))
    assert raised.value.message == (
        "aliases (*name) expand the file to 1,234,573 values, more than the 1,000,000 allowed; "
        "write the data out, or alias less of it"
    )


def test_aliases_within_the_limit_and_merge_keys_load(tmp_path: Path, parser: str) -> None:
    text = "base: &base {x: 1, y: [1, 2]}\none: {<<: *base, z: 3}\nmany: [" + "*base, " * 999
    data = read_yaml(_yaml(tmp_path, text + "*base]\n")).data
    assert data["one"] == {"x": 1, "y": [1, 2], "z": 3}
    assert len(data["many"]) == 1000


def test_an_alias_inside_the_value_it_names_is_refused(tmp_path: Path, parser: str) -> None:
    with pytest.raises(SpecSyntaxError) as raised:
        read_yaml(_yaml(tmp_path, "order: &order\n  id: 7\n  items: [1, *order]\n"))
    assert (raised.value.line, raised.value.path) == (3, ("order", "items", 1))
    assert raised.value.message == "an alias (*name) inside the value it names"


def test_json_nested_to_the_limit_loads_and_past_it_is_refused() -> None:
    assert load_json(_nested(MAX_DEPTH)) is not None
    for levels in (MAX_DEPTH + 1, 900, 100_000):
        with pytest.raises(NestedTooDeep):
            load_json(_nested(levels))
    assert load_json(json.dumps({"text": "[" * 500})) == {"text": "[" * 500}


def test_a_jsonl_line_too_deep_is_a_problem_at_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(f'{{"ok": "[[["}}\n\n{{"a": {_nested(100_000)}}}\n', encoding="utf-8")
    fine, deep = list(read_jsonl(path))
    assert not isinstance(fine, SpecSyntaxError) and fine.data == {"ok": "[[["}
    assert isinstance(deep, SpecSyntaxError)
    assert (deep.line, deep.message) == (
        3,
        f"invalid JSON: nested more than {MAX_DEPTH} levels deep at column {7 + MAX_DEPTH - 1}",
    )


def test_a_scenario_pattern_glob_cannot_use_is_a_problem(tmp_path: Path) -> None:
    """Python 3.11 and 3.12 refuse '**' inside a path component; newer ones accept it."""
    try:
        list(tmp_path.glob("scenarios/a**.yaml"))
    except ValueError as error:
        reason = str(error)
    else:
        pytest.skip("this Python's glob accepts '**' inside a component")
    (tmp_path / "benchmark.yaml").write_text(
        'name: b\nversion: "1"\nscenarios:\n  - scenarios/a**.yaml\n', encoding="utf-8"
    )
    with pytest.raises(BenchmarkInvalid) as raised:
        load_benchmark(tmp_path)
    assert [str(problem) for problem in raised.value.problems] == [
        f"benchmark.yaml:4: scenarios[0]: 'scenarios/a**.yaml' is not a usable pattern: {reason}"
    ]
