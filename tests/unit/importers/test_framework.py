"""The importer framework: the registry, reading sources with their problems, `format:` +
`source:` in a benchmark.yaml, provenance and the content hash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchyard.benchmarks.loader import load_benchmark
from benchyard.importers import (
    ImportOptions,
    SourceInvalid,
    UnknownFormat,
    get_importer,
    read_source,
)
from benchyard.importers.build import write_benchmark
from benchyard.importers.registry import BUILTIN, format_names
from benchyard.importers.source import Fields, RecordImporter
from benchyard.spec.problems import BenchmarkInvalid

from .sources import GSM8K, HUMANEVAL, direct_benchmark, write_jsonl


def test_every_builtin_format_is_registered_and_importable() -> None:
    for name in BUILTIN:
        importer = get_importer(name)
        assert importer.name == name
        assert importer.summary and importer.format_version
    assert set(BUILTIN) <= set(format_names())


def test_an_unknown_format_suggests_the_nearest() -> None:
    with pytest.raises(UnknownFormat, match="did you mean 'humaneval'"):
        get_importer("humaneva")


def test_a_plugin_registers_through_its_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    from benchyard.importers import registry

    plugin = EntryPoint(
        "toy", "benchyard.formats.gsm8k.importer:IMPORTER", registry.ENTRY_POINT_GROUP
    )
    monkeypatch.setattr(registry, "entry_points", lambda group: [plugin])
    monkeypatch.setattr(registry, "_loaded", {})
    assert "toy" in registry.format_names()
    assert registry.get_importer("toy").name == "gsm8k"


class _Questions(RecordImporter):
    """docs/importers.md's example of a format of records."""

    name = "questions"
    summary = "one question per record"

    def describe(self, options: Any) -> str:
        return "questions, each answered exactly"

    def scenario(self, fields: Fields, options: Any) -> dict[str, Any] | None:
        question = fields.get("question", str)
        answer = fields.get("answer", str)
        if not fields.ok:
            return None
        return {
            "id": f"q-{fields.record.index}",
            "stimulus": question,
            "checks": [{"type": "exact_match", "expected": answer}],
        }


def test_a_format_of_records_needs_only_its_scenario_and_description(tmp_path: Path) -> None:
    good = [{"question": "2+2?", "answer": "4"}, {"question": "3+3?", "answer": "6"}]
    imported = _Questions().read(write_jsonl(tmp_path / "q.jsonl", good), ImportOptions())
    assert (imported.name, imported.version) == ("questions", "1")
    assert imported.description == "questions, each answered exactly"
    assert [s.data["id"] for s in imported.scenarios] == ["q-0", "q-1"]
    assert {s.group for s in imported.scenarios} == {"questions"}
    assert [s.origin.line for s in imported.scenarios] == [1, 2]
    bad = write_jsonl(tmp_path / "bad.jsonl", [*good, {"question": 7}])
    with pytest.raises(SourceInvalid) as info:
        _Questions().read(bad, ImportOptions())
    shown = [str(problem) for problem in info.value.problems]
    assert f"{bad}:3: question: expected text, found a number" in shown, shown
    assert f"{bad}:3: answer: required field is missing" in shown, shown


def test_every_problem_of_a_source_names_file_line_and_field(tmp_path: Path) -> None:
    source = tmp_path / "he.jsonl"
    source.write_text(
        json.dumps(HUMANEVAL[0])
        + "\n"
        + "{not json\n"
        + json.dumps({**HUMANEVAL[1], "entry_point": "not a name"})
        + "\n"
        + json.dumps({"task_id": "x", "prompt": "p"})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(SourceInvalid) as info:
        read_source("humaneval", source)
    shown = [str(problem) for problem in info.value.problems]
    assert any(f"{source}:2: invalid JSON" in text for text in shown), shown
    assert any(f"{source}:3: entry_point: 'not a name' is not a Python name" in t for t in shown)
    assert any(f"{source}:4: test: required field is missing" in t for t in shown), shown
    assert any(f"{source}:4: entry_point: required field is missing" in t for t in shown)


def test_a_json_array_names_the_element(tmp_path: Path) -> None:
    source = tmp_path / "mbpp.json"
    source.write_text(json.dumps([{"task_id": 2, "prompt": "p", "code": "c"}]), encoding="utf-8")
    with pytest.raises(SourceInvalid, match=r"mbpp.json:1: \[0\].test_list: required field"):
        read_source("mbpp", source)


def test_bad_options_are_named(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "g.jsonl", GSM8K)
    with pytest.raises(SourceInvalid, match=r"options\.rul: unknown option"):
        read_source("gsm8k", source, {"rul": "official"})


def test_import_writes_a_validate_clean_benchmark_with_provenance(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "HumanEval.jsonl.gz", HUMANEVAL, gz=True)
    result = read_source("humaneval", source)
    out = write_benchmark(result, tmp_path / "he")
    benchmark = load_benchmark(out)
    assert [s.id for s in benchmark.scenarios] == ["Toy-0", "Toy-1", "Toy-2"]
    assert benchmark.provenance is not None
    assert benchmark.provenance["format"] == "humaneval"
    assert benchmark.provenance["source_sha256"].startswith("sha256:")
    assert benchmark.scenarios[0].reference == HUMANEVAL[0]["canonical_solution"]
    with pytest.raises(Exception, match="not empty"):
        write_benchmark(result, out)


def test_a_benchmark_yaml_loads_a_source_directly(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "data" / "test.jsonl", GSM8K)
    root = direct_benchmark(tmp_path / "bench", "gsm8k", Path("../data/test.jsonl"))
    first = load_benchmark(root)
    assert [s.id for s in first.scenarios] == ["gsm8k-0000", "gsm8k-0001"]
    assert first.provenance is not None and first.provenance["format_version"] == "1"
    assert first.locations["gsm8k-0001"].file == source.resolve()
    assert first.locations["gsm8k-0001"].line == 2
    write_jsonl(source, [GSM8K[0]])
    second = load_benchmark(root)
    assert len(second.scenarios) == 1
    assert second.content_hash != first.content_hash


def test_a_direct_source_reports_its_problems_with_its_own_lines(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "test.jsonl", [GSM8K[0], {"question": "no answer"}])
    root = direct_benchmark(tmp_path / "bench", "gsm8k", source)
    with pytest.raises(BenchmarkInvalid) as info:
        load_benchmark(root)
    assert [str(p) for p in info.value.problems] == [
        f"{source}:2: answer: required field is missing"
    ]


def test_format_mistakes_in_benchmark_yaml_are_problems(tmp_path: Path) -> None:
    root = direct_benchmark(tmp_path / "a", "gsm8kk", tmp_path / "missing.jsonl")
    with pytest.raises(
        BenchmarkInvalid, match=r"benchmark.yaml:3: format: unknown format 'gsm8kk'"
    ):
        load_benchmark(root)
    root = direct_benchmark(tmp_path / "b", "gsm8k", tmp_path / "missing.jsonl")
    with pytest.raises(BenchmarkInvalid, match=r"benchmark.yaml:4: source: no such file"):
        load_benchmark(root)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "benchmark.yaml").write_text("name: c\nversion: '1'\nformat: gsm8k\n")
    with pytest.raises(BenchmarkInvalid, match="give both 'format' and 'source'"):
        load_benchmark(tmp_path / "c")
